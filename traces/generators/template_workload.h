// TemplateWorkload: multi-tenant traffic with shared-prefix templates
// (system prompts, few-shot examples, documents) — what prefix caching, LPM,
// DLPM, D²LPM and Preble exploit — without a real trace.
//
//   workload:
//     type: templates
//     requests: 10000            # total over all clients (and/or duration_s)
//     block_size: 16             # tokens per prefix block (16 = one KV page; 64, 512 ...)
//     pools:                     # template pools, shared by the clients that name them
//       - name: docs
//         count: 50              # templates in the pool
//         zipf: 1.1              # popularity: template i drawn with weight 1/(i+1)^zipf (0 = uniform)
//         tokens: {dist: lognormal, median: 2000, sigma: 0.5, max: 6000}  # each template's length, drawn once
//     clients:
//       - name: tenant-a
//         rate: 8                # requests per second while on
//         arrival: poisson       # or {process: gamma, cv: 3}
//         pool: docs             # optional: prompts start with a template from this pool
//         template_share: 1.0    # probability that a request uses a template (else a unique prompt)
//         prompt: {dist: lognormal, median: 200, sigma: 0.8}   # the request's own tokens after the template
//         output: {dist: lognormal, median: 150, sigma: 0.8}
//         on_s: 0                # on/off phases: on for on_s, off for off_s, repeating
//         off_s: 0               #   (both 0 = always on); arrivals only while on
//         phase_s: 0             # the first on phase starts here
//
// A prompt = template tokens + the request's own tokens. Prefix blocks are
// chained content hashes: block i's id depends on every token up to its end,
// so two prompts share exactly the full blocks inside their common template;
// a block that reaches into a request's own tokens (or a partial last block)
// is unique to the request. `category` = 1 + template index in its pool (0:
// no template) — a field a trace could honestly carry.
//
// Determinism: client k draws arrivals, lengths and template choices from
// Rng::stream(seed, k); pool p's template lengths from Rng::stream(seed, 1<<20 | p).
// Arrival ties go to the lower client index.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "traces/generators/arrival_spec.h"
#include "traces/generators/length_distribution.h"
#include "traces/workload.h"

namespace servesim {

struct TemplatePool {
  std::string name;  // derived default: pool<i>, i its index in the list
  std::int64_t count = 10;
  double zipf = 1.0;
  LengthDistribution tokens = LengthDistribution::fixed(1024);
};

struct TemplateClient : ClientArrivals {
  std::string pool_name;            // `pool:` ("" = none)
  std::optional<std::size_t> pool;  // its index into pools (from pool_name)
  double template_share = 1.0;
  LengthDistribution prompt = LengthDistribution::fixed(256), output = LengthDistribution::fixed(256);
  double on_s = 0, off_s = 0, phase_s = 0;
};

struct TemplateSpec {
  StopRule stop;  // `requests` and/or duration_s
  std::int32_t block_size = 16;
  std::vector<TemplatePool> pools;
  std::vector<TemplateClient> clients;
};

// requests, duration_s, block_size; `pools` and `clients` (lists of maps, each
// item read by the tables below) are read and written by hand after them.
const OptionTable<TemplateSpec>& template_options();
// One item of `pools`: name, count, zipf, tokens.
const OptionTable<TemplatePool>& template_pool_options();
// One item of `clients`: name, rate, arrival, pool, template_share, prompt, output, on_s, off_s, phase_s.
const OptionTable<TemplateClient>& template_client_options();

class TemplateWorkload final : public Workload {
 public:
  explicit TemplateWorkload(TemplateSpec spec) : spec_(std::move(spec)) {}
  YAML::Node resolved() const override;
  std::unique_ptr<RequestSource> open(ClientTable& clients, std::uint64_t seed) const override;
  const TemplateSpec& spec() const { return spec_; }

 private:
  TemplateSpec spec_;
};

std::unique_ptr<Workload> parse_template_workload(YamlMap& m);

}  // namespace servesim
