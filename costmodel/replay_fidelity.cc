// Replay CSV, error summaries and the measured-substitution backend; see replay_fidelity.h.
#include "costmodel/replay_fidelity.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t p = s.find(sep, start);
    out.emplace_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

bool to_int(const std::string& s, std::int64_t* v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size() && *v >= 0;
}

bool to_double(const std::string& s, double* v) {
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(*v);
}

// Linear interpolation between order statistics of sorted values (numpy's default).
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

IterationKind iteration_kind(std::int64_t prefill_tokens, std::int64_t decode_tokens) {
  if (prefill_tokens == 0) return IterationKind::kDecodeOnly;
  if (2 * prefill_tokens >= prefill_tokens + decode_tokens) return IterationKind::kPrefillHeavy;
  return IterationKind::kMixed;
}

std::string_view batch_bucket(std::int64_t t) {
  if (t <= 1) return "1";
  if (t <= 8) return "2-8";
  if (t <= 32) return "9-32";
  if (t <= 128) return "33-128";
  if (t <= 512) return "129-512";
  if (t <= 2048) return "513-2048";
  return ">2048";
}

ReplayTable read_replay_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the replay CSV", path));
  ReplayTable t;
  t.path = path;
  std::string line;
  long n = 0;
  std::vector<std::string> cols;
  int c_it = -1, c_pre = -1, c_dec = -1, c_meas = -1;
  std::vector<int> c_pred;
  auto fail = [&](const std::string& field, const std::string& msg) -> void {
    throw InputError(located(path, n, field.empty() ? msg : fmt::format("field '{}': {}", field, msg)));
  };
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    if (cols.empty()) {
      cols = split(line, ',');
      for (int i = 0; i < static_cast<int>(cols.size()); ++i) {
        const std::string& c = cols[i];
        if (c == "iteration") c_it = i;
        if (c == "prefills") c_pre = i;
        if (c == "decodes") c_dec = i;
        if (c == "measured_us") c_meas = i;
        if (c == "predicted_us") {
          c_pred.push_back(i);
          t.backends.push_back("recorded");
        } else if (c.size() > 13 && c.rfind("predicted_", 0) == 0 && c.compare(c.size() - 3, 3, "_us") == 0) {
          c_pred.push_back(i);
          t.backends.push_back(c.substr(10, c.size() - 13));
        }
      }
      for (auto [idx, name] : {std::pair{c_it, "iteration"}, {c_pre, "prefills"}, {c_dec, "decodes"}, {c_meas, "measured_us"}})
        if (idx < 0) fail("", fmt::format("the header has no '{}' column", name));
      if (c_pred.empty()) fail("", "the header has no predicted_us or predicted_<backend>_us column");
      continue;
    }
    const auto f = split(line, ',');
    if (f.size() != cols.size()) fail("", fmt::format("has {} fields, the header has {}", f.size(), cols.size()));
    ReplayRow r;
    if (!to_int(f[c_it], &r.iteration)) fail("iteration", fmt::format("not a non-negative integer: '{}'", f[c_it]));
    if (!f[c_pre].empty())
      for (const std::string& item : split(f[c_pre], ';')) {
        const auto p = split(item, ':');
        PrefillChunk c;
        if (p.size() != 3 || !to_int(p[0], &c.new_tokens) || !to_int(p[1], &c.context) || (p[2] != "0" && p[2] != "1") ||
            c.new_tokens < 1)
          fail("prefills", fmt::format("chunk '{}' is not new:context:completes (new >= 1, completes 0 or 1)", item));
        c.completes = p[2] == "1";
        r.shape.prefills.push_back(c);
      }
    if (!f[c_dec].empty())
      for (const std::string& item : split(f[c_dec], ';')) {
        std::int64_t ctx = 0;
        if (!to_int(item, &ctx)) fail("decodes", fmt::format("not a context length: '{}'", item));
        r.shape.decode_contexts.push_back(ctx);
      }
    if (r.shape.empty()) fail("prefills", "an iteration with neither prefills nor decodes");
    if (!to_double(f[c_meas], &r.measured_us) || r.measured_us <= 0)
      fail("measured_us", fmt::format("not a positive number: '{}'", f[c_meas]));
    for (std::size_t b = 0; b < c_pred.size(); ++b) {
      double v = 0;
      if (!to_double(f[c_pred[b]], &v) || v < 0) fail(cols[c_pred[b]], fmt::format("not a non-negative number: '{}'", f[c_pred[b]]));
      r.predicted_us.push_back(v);
    }
    t.rows.push_back(std::move(r));
  }
  if (cols.empty()) throw InputError(fmt::format("{}: no header row", path));
  if (t.rows.empty()) throw InputError(fmt::format("{}: no iterations", path));
  return t;
}

std::vector<ErrorSummary> summarise_errors(const ReplayTable& t) {
  // One group's iterations: signed relative errors and the sums of measured and predicted time.
  struct Group {
    std::vector<double> signed_errors;
    double measured = 0, predicted = 0;
    void add(double e, double m, double p) {
      signed_errors.push_back(e);
      measured += m;
      predicted += p;
    }
  };
  std::vector<ErrorSummary> out;
  for (std::size_t b = 0; b < t.backends.size(); ++b) {
    Group all;
    std::map<int, Group> by_kind;
    std::map<std::int64_t, std::pair<std::string, Group>> by_bucket;  // ordered by the bucket's lower bound
    for (const ReplayRow& r : t.rows) {
      const double p = r.predicted_us[b];
      const double e = (p - r.measured_us) / r.measured_us;
      all.add(e, r.measured_us, p);
      by_kind[static_cast<int>(iteration_kind(r.shape.prefill_tokens(), r.shape.decode_tokens()))].add(e, r.measured_us, p);
      const std::int64_t tokens = r.shape.total_tokens();
      std::int64_t lower = 1;
      for (std::int64_t edge : {1, 8, 32, 128, 512, 2048})
        if (tokens > edge) lower = edge + 1;
      auto& slot = by_bucket[lower];
      slot.first = std::string(batch_bucket(tokens));
      slot.second.add(e, r.measured_us, p);
    }
    auto add = [&](std::string group_by, std::string group, const Group& g) {
      std::vector<double> abs_errors(g.signed_errors.size());
      std::transform(g.signed_errors.begin(), g.signed_errors.end(), abs_errors.begin(), [](double e) { return std::abs(e); });
      std::sort(abs_errors.begin(), abs_errors.end());
      std::vector<double> signed_errors = g.signed_errors;
      std::sort(signed_errors.begin(), signed_errors.end());
      out.push_back({t.backends[b], std::move(group_by), std::move(group), static_cast<std::int64_t>(abs_errors.size()),
                     quantile(abs_errors, 0.5), quantile(abs_errors, 0.9), abs_errors.back(),
                     quantile(signed_errors, 0.5), g.predicted > 0 ? g.measured / g.predicted : 0.0});
    };
    add("all", "all", all);
    for (const auto& [k, g] : by_kind) add("kind", std::string(kIterationKindNames[k]), g);
    for (const auto& [lower, gv] : by_bucket) add("batch_tokens", gv.first, gv.second);
  }
  return out;
}

std::string error_summary_csv(const std::vector<ErrorSummary>& s) {
  std::string csv =
      "backend,group_by,group,iterations,median_abs_rel_err,p90_abs_rel_err,max_abs_rel_err,signed_median_rel_err,"
      "measured_over_predicted\n";
  for (const ErrorSummary& e : s)
    csv += fmt::format("{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n", e.backend, e.group_by, e.group, e.iterations,
                       e.median, e.p90, e.max, e.signed_median, e.measured_over_predicted);
  return csv;
}

double host_part_us(const CostModel& m, const BatchShape& b) {
  return m.parts(b)[static_cast<std::size_t>(Part::kOverhead)];
}

std::string iteration_table_csv(const ReplayTable& t) {
  std::string csv = "iteration,kind,batch_tokens,prefill_tokens,decodes,decode_kv_sum,decode_kv_max,measured_us";
  for (const std::string& b : t.backends) csv += fmt::format(",predicted_{}_us,err_{}", b, b);
  if (!t.parts_backend.empty())
    for (const std::string_view part : kPartNames) csv += fmt::format(",{}_{}_us", t.parts_backend, part);
  csv += '\n';
  for (const ReplayRow& r : t.rows) {
    const std::int64_t prefill = r.shape.prefill_tokens(), decodes = r.shape.decode_tokens();
    std::int64_t kv_sum = 0, kv_max = 0;
    for (const std::int64_t c : r.shape.decode_contexts) {
      kv_sum += c + 1;
      kv_max = std::max(kv_max, c + 1);
    }
    csv += fmt::format("{},{},{},{},{},{},{},{:.3f}", r.iteration, kIterationKindNames[static_cast<std::size_t>(
                                                                        iteration_kind(prefill, decodes))],
                       batch_bucket(prefill + decodes), prefill, decodes, kv_sum, kv_max, r.measured_us);
    for (const double p : r.predicted_us) csv += fmt::format(",{:.3f},{:.6f}", p, (p - r.measured_us) / r.measured_us);
    if (!t.parts_backend.empty())
      for (std::size_t i = 0; i < kPartCount; ++i) csv += fmt::format(",{:.3f}", i < r.parts_us.size() ? r.parts_us[i] : 0.0);
    csv += '\n';
  }
  return csv;
}

std::string MeasuredCostModel::key(const BatchShape& b) {
  std::string k;
  for (const auto& c : b.prefills) k += fmt::format("{}:{}:{};", c.new_tokens, c.context, c.completes ? 1 : 0);
  k += '|';
  for (auto c : b.decode_contexts) k += fmt::format("{};", c);
  return k;
}

MeasuredCostModel::MeasuredCostModel(std::shared_ptr<const CostModel> inner, const ReplayTable& replay)
    : inner_(std::move(inner)) {
  if (!replay.rows.empty()) host_us_ = host_part_us(*inner_, replay.rows.front().shape);
  std::unordered_map<std::string, std::vector<double>> samples;
  double meas[3] = {0, 0, 0}, pred[3] = {0, 0, 0};
  for (const ReplayRow& r : replay.rows) {
    samples[key(r.shape)].push_back(r.measured_us);
    const auto k = static_cast<std::size_t>(iteration_kind(r.shape.prefill_tokens(), r.shape.decode_tokens()));
    meas[k] += r.measured_us;
    pred[k] += time_to_seconds(inner_->iteration_time(r.shape)) * 1e6 - host_us_;
  }
  for (auto& [k, v] : samples) {
    std::sort(v.begin(), v.end());
    measured_[k] = std::max<Time>(1, seconds_to_time((quantile(v, 0.5) + host_us_) * 1e-6));
  }
  const double all = (pred[0] + pred[1] + pred[2]) > 0 ? (meas[0] + meas[1] + meas[2]) / (pred[0] + pred[1] + pred[2]) : 1;
  for (std::size_t k = 0; k < 3; ++k) ratio_[k] = pred[k] > 0 ? meas[k] / pred[k] : all;
}

Time MeasuredCostModel::iteration_time(const BatchShape& b) const {
  if (b.empty()) return 0;
  if (auto it = measured_.find(key(b)); it != measured_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  const double r = ratio_[static_cast<std::size_t>(iteration_kind(b.prefill_tokens(), b.decode_tokens()))];
  const double host_ns = host_us_ * 1e3;
  return std::max<Time>(
      1, static_cast<Time>(std::llround((static_cast<double>(inner_->iteration_time(b)) - host_ns) * r + host_ns)));
}

std::string MeasuredCostModel::identity() const {
  return fmt::format("measured substitution (replayed shapes measured + {} us host; others {} less host x ratio of kind: "
                     "prefill_heavy {:.4f}, decode_only {:.4f}, mixed {:.4f}, + host)",
                     host_us_, inner_->identity(), ratio_[0], ratio_[1], ratio_[2]);
}

}  // namespace servesim
