// The engine bench's two workloads (servesim_engine_bench, engine_bench.cc),
// as scenario YAML: the synthetic default (three clients, 260 req/s on 16
// workers) and the same clients with shared-prefix templates (--templates).
// Also read by tests that run the bench's traffic at another scale (policy
// behaviour test 4d), so the two cannot drift apart.
#pragma once
#include <string>

namespace servesim::bench {

// What both share: model, hardware, 16 workers, FCFS behind least_outstanding, roofline.
inline const std::string kCommon = R"(seed: 1
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 16}
policy: {local: fcfs, global: least_outstanding}
cost_model: {backend: roofline}
)";

inline const std::string kScenario = "name: engine_bench\n" + kCommon + R"(workload:
  type: synthetic
  requests: 1000000
  clients:
    - {name: chat, rate: 180, prompt: {dist: lognormal, median: 600, sigma: 0.8, max: 6000},
       output: {dist: lognormal, median: 150, sigma: 0.8, max: 2000}}
    - {name: code, rate: 60, arrival: {process: gamma, cv: 3},
       prompt: {dist: lognormal, median: 1500, sigma: 0.6, max: 7000},
       output: {dist: lognormal, median: 30, sigma: 1.0, max: 1000}}
    - {name: batch, rate: 20, prompt: {dist: uniform, min: 200, max: 3000}, output: {dist: uniform, min: 50, max: 800}}
)";

inline const std::string kTemplateScenario = "name: engine_bench_templates\n" + kCommon + R"(workload:
  type: templates
  requests: 1000000
  block_size: 64
  pools:
    - {name: sys, count: 200, zipf: 1.0, tokens: {dist: lognormal, median: 400, sigma: 0.6, max: 3000}}
    - {name: docs, count: 2000, zipf: 1.2, tokens: {dist: lognormal, median: 1200, sigma: 0.5, max: 5000}}
  clients:
    - {name: chat, rate: 180, pool: sys, prompt: {dist: lognormal, median: 300, sigma: 0.8, max: 3000},
       output: {dist: lognormal, median: 150, sigma: 0.8, max: 2000}}
    - {name: code, rate: 60, arrival: {process: gamma, cv: 3}, pool: docs,
       prompt: {dist: lognormal, median: 300, sigma: 0.6, max: 2000},
       output: {dist: lognormal, median: 30, sigma: 1.0, max: 1000}}
    - {name: batch, rate: 20, pool: sys, template_share: 0.5, prompt: {dist: uniform, min: 200, max: 3000},
       output: {dist: uniform, min: 50, max: 800}}
)";

}  // namespace servesim::bench
