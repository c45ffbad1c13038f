#include "reports/slo.h"

#include <limits>

#include "sim/core/time.h"

namespace servesim {

bool SloConfig::any() const {
  if (all.any()) return true;
  for (const auto& [name, t] : clients)
    if (t.any()) return true;
  return false;
}

const SloThresholds& SloConfig::of(const std::string& client) const {
  auto it = clients.find(client);
  return it == clients.end() ? all : it->second;
}

SloVerdict evaluate_slo(const SloThresholds& t, const RequestOutcome& r) {
  SloVerdict v;
  v.counted = t.any();
  v.has_ttft = t.ttft_s > 0;
  v.has_tpot = t.tpot_s > 0;
  v.has_e2e = t.e2e_s > 0;
  if (!v.counted || r.status != RequestStatus::kFinished || !r.finish || !r.first_token || !r.arrival) return v;
  bool all = true;
  auto check = [&](std::optional<bool>& out, double threshold_s, Time value, std::int64_t scale) {
    if (!(threshold_s > 0)) return;
    // A limit past int64 (threshold in ns x output tokens) is met by any time.
    const Time limit = seconds_to_time(threshold_s);
    out = limit > std::numeric_limits<Time>::max() / scale || value <= limit * scale;
    all = all && *out;
  };
  check(v.ttft, t.ttft_s, *r.first_token - *r.arrival, 1);
  const std::int64_t steps = r.spec->output_tokens - 1;
  if (t.tpot_s > 0) {
    if (steps > 0) check(v.tpot, t.tpot_s, *r.finish - *r.first_token, steps);
    else v.tpot = true;  // one output token: no time per output token
  }
  check(v.e2e, t.e2e_s, *r.finish - *r.arrival, 1);
  v.met = all;
  return v;
}

}  // namespace servesim
