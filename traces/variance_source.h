// Sources of variance for repetitions (a scenario's `variance:` section).
//
// Repetitions of a run differ only by their seed. For a synthetic workload
// the seed draws new arrivals and lengths, so repetitions vary; a trace
// replay's arrivals and lengths are fixed by the file, and its seed moves
// little or nothing (the client split, sampling): five repetitions of an
// Azure replay are the same run five times, and an interval over them is
// 0 wide. The sources below make a repetition vary what a researcher can
// defend, each drawn from its own seeded stream of the run's seed:
//
//  - resample: block_bootstrap — the moving-block bootstrap over time (Künsch,
//    1989): the stream is cut into blocks of `block_s` seconds of arrivals,
//    and as many blocks are drawn uniformly with replacement and laid end to
//    end (each shifted to its new place), so burstiness and load within a
//    block are kept while which stretches of the trace appear varies. A
//    request with parents (sessions, agent DAGs) stays in its first
//    ancestor's block, so sessions and workflows are whole; a block drawn
//    twice gets fresh request and session ids (its prefix blocks are the same
//    content, as a repeated stretch of traffic would be). `auto` (default):
//    block_bootstrap for a trace workload run as one of several repetitions
//    (`servesim run --repeat N`, a sweep's `repeat:`), none otherwise.
//    Buffers the (windowed, sampled) stream in memory.
//  - arrival_jitter: σ of a mean-one log-normal factor on every gap between
//    consecutive independent arrivals (order kept; 0.1 = gaps vary ~10%).
//  - output_noise: σ of a mean-one log-normal factor on every output length
//    (rounded, at least 1 token): the spread of answer lengths a replay of
//    other users' prompts would see.
//
//  - cost_noise: run-to-run noise of the engine's iteration times, a
//    median-one log-normal factor per distinct batch shape, drawn from the
//    run's seed (costmodel/noisy_cost_model.h). `profile`: σ is the measured
//    spread of each worker's calibrated profile (KernelFits::spread_sigma,
//    the median over its rows of ln(p90/p10)/2.563); a number: that σ on any
//    backend; `none`; `auto` (default): `profile` for repetitions priced by
//    measured profiles that have a spread, none otherwise. Policies keep
//    estimating with the noiseless model. Resolved in configs/ (it needs the
//    cost model): resolve_cost_noise.
//
// Everything is off unless set (or `auto` resolves to a source), so a
// single run replays its trace exactly; resolved() states what ran.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include <yaml-cpp/yaml.h>

#include "sim/core/option_table.h"
#include "sim/core/request_source.h"
#include "sim/core/time.h"
#include "sim/core/yaml_map.h"

namespace servesim {

struct VarianceConfig {
  enum class Resample { kAuto, kNone, kBlockBootstrap };
  Resample resample = Resample::kAuto;  // after resolve(): never kAuto
  double block_s = 60;                  // bootstrap block length, seconds of arrivals
  double arrival_jitter = 0;            // σ of the log-normal factor on inter-arrival gaps
  double output_noise = 0;              // σ of the log-normal factor on output lengths
  enum class CostNoise { kAuto, kNone, kProfile, kSigma };
  CostNoise cost_noise = CostNoise::kAuto;  // after resolve_cost_noise(): never kAuto
  double cost_sigma = 0;                    // kSigma: the σ given
  bool repetitions = false;             // set by --repeat / repeat: (not written back)

  // auto -> block_bootstrap for a trace workload among repetitions, else none.
  void resolve(bool trace_workload);
  bool active() const {
    return resample == Resample::kBlockBootstrap || arrival_jitter > 0 || output_noise > 0 || cost_noise_on();
  }
  bool cost_noise_on() const {
    return cost_noise == CostNoise::kProfile || (cost_noise == CostNoise::kSigma && cost_sigma > 0);
  }
  bool operator==(const VarianceConfig& o) const {
    return resample == o.resample && block_s == o.block_s && arrival_jitter == o.arrival_jitter &&
           output_noise == o.output_noise && cost_noise == o.cost_noise && cost_sigma == o.cost_sigma;
  }
};

// The keys of `variance:` (parse, write-back and docs/configuration.md's check).
const OptionTable<VarianceConfig>& variance_options();
// Reads the keys of a `variance:` map and calls m.finish() (InputError naming the key).
VarianceConfig parse_variance(YamlMap& m);
// The resolved settings (resolve() first), in the layout parse_variance accepts.
YAML::Node variance_yaml(const VarianceConfig& v);

// Wraps `inner` with the configured sources, seeded from `seed`; returns
// `inner` unchanged when none is active.
std::unique_ptr<RequestSource> with_variance(std::unique_ptr<RequestSource> inner, const VarianceConfig& v,
                                             std::uint64_t seed);

}  // namespace servesim
