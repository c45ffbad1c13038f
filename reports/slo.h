// Service-level objectives (SLOs): latency thresholds a request must meet,
// scenario-wide with per-client overrides (the scenario's `slo:` section,
// docs/configuration.md), and the verdict of one request against them
// (requests.csv's slo_*_met columns, attainment and goodput in summary.csv;
// docs/reports.md).
//
// A threshold of 0 is "not set". A request meets a threshold when its value
// is <= the threshold, compared in integer nanoseconds (TPOT: finish −
// first_token <= threshold × (output_tokens − 1)), so equal is met exactly.
// A finished request with one output token has no TPOT and meets any TPOT
// threshold. A request that did not finish (rejected, unfinished) has no
// verdict per threshold (empty cells) and does NOT meet its SLO when
// attainment and goodput are counted.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "sim/run_observer.h"

namespace servesim {

// Thresholds in seconds; 0 = not set. Keys: slo.ttft_s, slo.tpot_s, slo.e2e_s
// (table: configs/option_tables.cc, slo_options()).
struct SloThresholds {
  double ttft_s = 0, tpot_s = 0, e2e_s = 0;
  bool any() const { return ttft_s > 0 || tpot_s > 0 || e2e_s > 0; }
  bool operator==(const SloThresholds&) const = default;
};

struct SloConfig {
  SloThresholds all;                               // every client
  std::map<std::string, SloThresholds> clients;    // by client name: replaces the keys it sets
  bool any() const;                                // some threshold set for some client
  // The thresholds of one client: `all`, with the client's override keys on top.
  const SloThresholds& of(const std::string& client) const;
  bool operator==(const SloConfig&) const = default;
};

// One request against its client's thresholds. Each optional is empty when
// that threshold is not set or the request did not finish; `met` (every set
// threshold met) is empty when no threshold is set or it did not finish.
struct SloVerdict {
  std::optional<bool> ttft, tpot, e2e, met;
  // Counts toward attainment: a threshold is set for the request's client
  // (per metric: has_*).
  bool counted = false, has_ttft = false, has_tpot = false, has_e2e = false;
  // Meets every threshold (false for requests that did not finish).
  bool meets() const { return met.value_or(false); }
};

SloVerdict evaluate_slo(const SloThresholds& t, const RequestOutcome& r);

}  // namespace servesim
