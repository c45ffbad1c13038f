// Shared fitting helpers; see fit_rows.h.
#include "costmodel/fit_rows.h"

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

void row_error(const std::string& file, const ProfilePoint& p, const std::string& msg) {
  throw InputError(located(file, p.line, fmt::format("{}/{}: {}", p.kernel, p.variant, msg)));
}

HeadShape row_head_shape(const std::string& file, const ProfilePoint& p) {
  if (p.heads < 1 || p.kv_heads < 1 || p.head_dim < 1) row_error(file, p, "needs heads, kv_heads and head_dim");
  return HeadShape{p.heads, p.kv_heads, p.head_dim};
}

std::int64_t need_column(const std::string& file, const ProfilePoint& p, std::int64_t v, const char* column) {
  if (v < 1) row_error(file, p, fmt::format("needs column '{}' >= 1", column));
  return v;
}

FeatureFit fit_or_note(const std::vector<std::string>& names, const Samples& s, const std::string& what,
                       std::vector<std::string>& problems) {
  if (s.t.empty()) return {};
  FeatureFit f = FeatureFit::fit(names, s.x, s.t);
  if (f.residuals().median > 0.5) problems.push_back(fmt::format("{}: fits badly (median error {:.0f}%)", what,
                                                                 100 * f.residuals().median));
  return f;
}

void fit_head_shapes(const std::vector<std::string>& names, const std::map<HeadShape, Samples>& samples,
                     const char* family, std::map<HeadShape, FeatureFit>& out, std::vector<std::string>& problems) {
  auto few = [&](const Samples& s) { return s.t.size() < 2 * names.size(); };
  const HeadShape* ref = nullptr;
  for (const auto& [h, s] : samples)
    if (!few(s) && (!ref || s.t.size() > samples.at(*ref).t.size())) ref = &h;
  for (const auto& [h, s] : samples)
    if (!few(s) || !ref) out[h] = fit_or_note(names, s, fmt::format("{} {}", family, h.label()), problems);
  if (ref)
    for (const auto& [h, s] : samples)
      if (few(s)) out[h] = FeatureFit::fit_scaled(out.at(*ref), ref->label(), s.x, s.t);
}

}  // namespace servesim
