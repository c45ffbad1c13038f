// SyntheticWorkload: several clients, each an independent arrival process
// (Poisson, or Gamma renewal with a coefficient of variation for burstiness)
// with its own rate and prompt/output length distributions. The merged stream
// stops after `requests` arrivals or at `duration_s`, whichever comes first.
//
//   workload:
//     type: synthetic
//     requests: 1000          # total over all clients (and/or duration_s)
//     rate_scale: 1.0         # multiplies every client's rate (for load sweeps)
//     clients:
//       - name: chat
//         rate: 4             # requests per second
//         arrival: poisson    # or {process: gamma, cv: 3}
//         prompt: {dist: lognormal, median: 1024, sigma: 0.8, max: 8192}
//         output: {dist: uniform, min: 32, max: 512}
//
// Determinism: client k draws from Rng::stream(seed, k); ties in arrival time
// go to the lower client index.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "traces/generators/arrival_spec.h"
#include "traces/generators/length_distribution.h"
#include "traces/workload.h"

namespace servesim {

struct SyntheticClient : ClientArrivals {
  LengthDistribution prompt = LengthDistribution::fixed(1024);
  LengthDistribution output = LengthDistribution::fixed(256);
};

struct SyntheticSpec {
  StopRule stop;  // `requests` and/or duration_s
  double rate_scale = 1.0;  // multiplies every client's rate (load sweeps)
  std::vector<SyntheticClient> clients;
};

// requests, duration_s, rate_scale; `clients` (a list of maps, each read by
// synthetic_client_options()) is read and written by hand after them.
const OptionTable<SyntheticSpec>& synthetic_options();
// One item of `clients`: name, rate, arrival, prompt, output.
const OptionTable<SyntheticClient>& synthetic_client_options();

class SyntheticWorkload final : public Workload {
 public:
  explicit SyntheticWorkload(SyntheticSpec spec) : spec_(std::move(spec)) {}
  YAML::Node resolved() const override;
  std::unique_ptr<RequestSource> open(ClientTable& clients, std::uint64_t seed) const override;
  const SyntheticSpec& spec() const { return spec_; }

 private:
  SyntheticSpec spec_;
};

std::unique_ptr<Workload> parse_synthetic_workload(YamlMap& m);

}  // namespace servesim
