// The replay's GPU side in the servesim-kernels binary: the `check` case replay_tiny
// (the tiny model's GPU forward pass against the CPU reference, tiny_model.h) and the
// `replay` command (replay_command.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/bench/device_info.h"
#include "kernels/bench/registry.h"
#include "kernels/replay/batch_record.h"
#include "kernels/replay/replay_command.h"
#include "kernels/replay/replay_csv.h"
#include "kernels/replay/replay_gpu.cuh"

namespace servesim::kernels {
namespace {

// Tolerance of the tiny model's logits: bf16 storage after every launch over two layers,
// float (GPU) against double (CPU) reductions, bf16 logits on the GPU.
constexpr double kReplayTol = 3e-2;

int check_replay_tiny(const CheckOptions& opts) {
  CheckReport report("replay_tiny", opts.verbose);
  const ReplayModel m = tiny_replay_model();
  const ReplayWeights w = make_replay_weights(m, opts.seed);
  GpuReplayOptions o;
  o.kv_gb = 0.02;  // 1,220 pages per layer: every case fits without reusing a page
  o.seed = opts.seed;
  GpuReplay gpu(m, o, &w);
  std::vector<std::pair<std::string, RecordedIteration>> cases(4);
  cases[0].first = "mixed 2 chunks + 3 decodes";
  cases[0].second.prefills = {{37, 0, true}, {64, 100, false}};
  cases[0].second.decodes = {5, 300, 1000};
  cases[1].first = "decode only";
  cases[1].second.decodes = {1, 17, 63, 64, 65, 2047};
  cases[2].first = "prefill only, chunk over a cached prefix";
  cases[2].second.prefills = {{200, 333, true}};
  cases[3].first = "one token";
  cases[3].second.prefills = {{1, 0, true}};
  for (const auto& [name, it] : cases) {
    ReplayReference ref(w, opts.seed);
    const ForwardOutput cpu = ref.run(replay_steps(it, opts.seed, m.vocab, &ref));
    gpu.prepare(it, true);
    gpu.run(nullptr);
    const std::vector<float> logits = gpu.logits();
    report.expect_close("replay_tiny logits " + name, logits, cpu.logits, kReplayTol);
    const std::vector<int32_t> sampled = gpu.sampled();
    bool argmax_ok = sampled.size() == static_cast<size_t>(gpu.rows());
    for (size_t r = 0; argmax_ok && r < sampled.size(); ++r) {
      const auto row = logits.begin() + static_cast<std::ptrdiff_t>(r * m.vocab);
      argmax_ok = sampled[r] == static_cast<int32_t>(std::max_element(row, row + m.vocab) - row);
    }
    report.expect_true("replay_tiny sampling " + name, argmax_ok, "greedy id = argmax of the GPU's logits");
  }
  return report.failures();
}

}  // namespace

int run_replay(const KernelsCli& cli) {
  const ReplayModel model = replay_model_by_name(cli.model);
  if (model.name.empty()) {
    std::fprintf(stderr, "servesim-kernels replay: unknown model '%s' (llama3-8b, llama3-70b, llama2-7b, tiny)\n",
                 cli.model.c_str());
    return 2;
  }
  try {
    BatchRecordReader reader(cli.inputs.front());
    if (replay_model_by_name(reader.header().model).name != model.name)
      std::printf("note: the record was made for %s; replaying it with %s\n", reader.header().model.c_str(),
                  model.name.c_str());
    std::ofstream out(cli.output);
    if (!out) {
      std::fprintf(stderr, "servesim-kernels replay: cannot write %s\n", cli.output.c_str());
      return 2;
    }
    GpuReplayOptions o;
    o.tp = cli.tp;
    o.seed = cli.seed;
    o.kv_gb = cli.kv_gb > 0 ? cli.kv_gb : 40;
    o.prefill_variant = cli.prefill_variant;
    GpuReplay gpu(model, o, nullptr);
    std::printf("replay: prefill attention variant %s\n", gpu.prefill_variant());
    cudaStream_t st = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    SERVESIM_CUDA_CHECK(cudaStreamCreate(&st));
    SERVESIM_CUDA_CHECK(cudaEventCreate(&e0));
    SERVESIM_CUDA_CHECK(cudaEventCreate(&e1));
    out << replay_csv_header(cli.inputs.front(), model.name, cli.tp, cli.warmup, cli.reps,
                             device_summary() + " prefill_variant=" + gpu.prefill_variant());
    size_t allreduce_col = reader.header().parts.size();
    for (size_t i = 0; i < reader.header().parts.size(); ++i)
      if (reader.header().parts[i] == "allreduce") allreduce_col = i;
    RecordedIteration it;
    int64_t done = 0, reused = 0;
    while (reader.next(&it)) {
      gpu.prepare(it, false);
      for (int r = 0; r < cli.warmup; ++r) gpu.run(st);
      std::vector<float> ms;
      for (int r = 0; r < cli.reps; ++r) {
        SERVESIM_CUDA_CHECK(cudaEventRecord(e0, st));
        gpu.run(st);
        SERVESIM_CUDA_CHECK(cudaEventRecord(e1, st));
        SERVESIM_CUDA_CHECK(cudaEventSynchronize(e1));
        float t = 0;
        SERVESIM_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
      }
      double predicted = static_cast<double>(it.predicted_ns) * 1e-3;
      if (cli.tp > 1 && allreduce_col < it.parts_us.size()) predicted -= it.parts_us[allreduce_col];
      out << replay_csv_row(it, ReplayMeasurement{predicted, ms, gpu.launches(), gpu.pages_reused()});
      reused += gpu.pages_reused();
      if (++done % 200 == 0) std::printf("replay: %lld iterations\n", static_cast<long long>(done));
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(st);
    out.close();
    if (!out) {
      std::fprintf(stderr, "servesim-kernels replay: write to %s failed\n", cli.output.c_str());
      return 2;
    }
    std::printf("replay: %lld iterations -> %s (%lld reused KV pages past the pool)\n", static_cast<long long>(done),
                cli.output.c_str(), static_cast<long long>(reused));
    return 0;
  } catch (const BatchRecordError& e) {
    std::fprintf(stderr, "servesim-kernels replay: %s\n", e.what());
    return 2;
  }
}

}  // namespace servesim::kernels

SERVESIM_REGISTER_KERNEL_FAMILY(replay_tiny, {.name = "replay_tiny",
                                             .description = "GPU replay of the tiny model vs its CPU reference (logits)",
                                             .check = servesim::kernels::check_replay_tiny,
                                             .bench = nullptr,
                                             .order = 90});
