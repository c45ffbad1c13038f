// Held-out validation of profile fits; see profile_validation.h.
#include "costmodel/profile_validation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "costmodel/kernel_fits.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

bool is_composite(const std::string& family) {
  return family.ends_with("_e2e") || family.find("_dense_") != std::string::npos;
}

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// Uniform in [0, 1) from the row's identity.
double row_draw(const ProfilePoint& p, std::uint64_t seed) {
  const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", p.kernel, p.variant, p.batch,
                                      p.ctx, p.q_len, p.prefix, p.heads, p.kv_heads, p.head_dim, p.page_size, p.budget,
                                      p.m, p.n, p.k, p.params);
  std::uint64_t h = fnv1a(key, 0xCBF29CE484222325ull ^ (seed * 0x9E3779B97F4A7C15ull));
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

bool is_gemm_probe(const ProfilePoint& p) { return p.param("probe").value_or("0") == "1"; }

}  // namespace

ValidationResult validate_profile(const ProfileTable& table, const ValidationOptions& o) {
  SIM_CHECK(o.holdout > 0 && o.holdout < 1, "holdout {} outside (0, 1)", o.holdout);
  // GEMM: the off-grid probe rows when the profile has them (all of them, and
  // no grid row); else a random share of the grid, curve ends (per weight
  // shape) staying in the training set.
  bool probes = false;
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::int64_t, std::int64_t>> m_range;
  for (const ProfilePoint& p : table.points()) {
    if (KernelFits::family_of(p) != "gemm") continue;
    probes = probes || is_gemm_probe(p);
    auto [it, fresh] = m_range.try_emplace({p.n, p.k}, p.m, p.m);
    it->second.first = std::min(it->second.first, p.m);
    it->second.second = std::max(it->second.second, p.m);
  }
  std::set<const ProfilePoint*> held;
  for (const ProfilePoint& p : table.points()) {
    const std::string fam = KernelFits::family_of(p);
    if (fam.empty() || is_composite(fam)) continue;
    if (fam == "gemm") {
      if (probes) {
        if (is_gemm_probe(p)) held.insert(&p);
        continue;
      }
      const auto& r = m_range.at({p.n, p.k});
      if (p.m == r.first || p.m == r.second) continue;
    }
    if (row_draw(p, o.seed) < o.holdout) held.insert(&p);
  }
  const KernelFits fits = KernelFits::fit(table, [&](const ProfilePoint& p) { return !held.count(&p); });

  ValidationResult r;
  r.problems = fits.problems();
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_family;  // predicted, measured
  std::map<std::string, std::size_t> fitted;
  for (const ProfilePoint& p : table.points()) {
    const std::string fam = KernelFits::family_of(p);
    if (fam.empty()) continue;
    if (!is_composite(fam) && !held.count(&p)) {
      ++fitted[fam];
      continue;
    }
    std::optional<double> pred = fits.predict(p);
    if (!pred) {
      r.problems.push_back(fmt::format("{}:{}: {}/{} not predicted (its fit is missing)", table.file(), p.line,
                                       p.kernel, p.variant));
      continue;
    }
    r.points.push_back(ValidationPoint{fam, &p, *pred});
    by_family[fam].first.push_back(*pred);
    by_family[fam].second.push_back(p.median_us);
  }
  for (const auto& [fam, pm] : by_family) {
    FamilyValidation v;
    v.family = fam;
    v.kind = is_composite(fam) ? "composite" : (fam == "gemm" && probes) ? "off-grid" : "held-out";
    v.fitted = fitted[fam];
    v.error = relative_error(pm.first, pm.second);
    r.families.push_back(v);
  }
  return r;
}

std::string validation_csv(const ValidationResult& r) {
  std::string s = "family,kind,fitted_rows,predicted_rows,median_rel_err,p90_rel_err,max_rel_err,meets_target\n";
  for (const auto& f : r.families)
    s += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.4f},{}\n", f.family, f.kind, f.fitted, f.error.points,
                     f.error.median, f.error.p90, f.error.max, f.meets_target() ? "yes" : "no");
  return s;
}

std::string validation_points_csv(const ValidationResult& r) {
  std::string s = "family,line,kernel,variant,batch,ctx,budget,m,n,k,measured_us,predicted_us,rel_err\n";
  for (const auto& p : r.points) {
    const ProfilePoint& row = *p.row;
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.4f}\n", p.family, row.line, row.kernel,
                     row.variant, row.batch, row.ctx, row.budget, row.m, row.n, row.k, row.median_us, p.predicted_us,
                     std::abs(p.predicted_us - row.median_us) / row.median_us);
  }
  return s;
}

}  // namespace servesim
