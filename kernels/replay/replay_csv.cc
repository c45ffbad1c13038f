// replay.csv formatting; see replay_csv.h.
#include "kernels/replay/replay_csv.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace servesim::kernels {

std::string replay_csv_header(const std::string& record, const std::string& model, int tp, int warmup, int reps,
                              const std::string& device) {
  std::string h = "# servesim replay v1\n# record=" + record + " model=" + model + " tp=" + std::to_string(tp) +
                  " warmup=" + std::to_string(warmup) + " reps=" + std::to_string(reps) + " device=" + device + "\n";
  if (tp > 1)
    h += "# tp > 1: one GPU's shard ran; the all-reduces did not, so predicted_us excludes the recorded allreduce_us\n";
  h += "iteration,worker,attention,prefill_tokens,decode_tokens,prefills,decodes,logit_rows,launches,pages_reused,"
       "predicted_us,measured_us,measured_min_us,measured_max_us\n";
  return h;
}

std::string replay_csv_row(const RecordedIteration& it, const ReplayMeasurement& m) {
  if (m.samples_ms.empty()) throw std::invalid_argument("replay_csv_row: no timed sample");
  std::vector<float> ms = m.samples_ms;
  std::sort(ms.begin(), ms.end());
  // Built with += only (GCC 12 warns, wrongly, on "literal" + std::string temporaries).
  std::string row = std::to_string(it.iteration);
  row += ',';
  row += std::to_string(it.worker);
  row += ',';
  row += it.attention;
  row += ',';
  row += std::to_string(it.prefill_tokens());
  row += ',';
  row += std::to_string(it.decodes.size());
  row += ',';
  for (size_t i = 0; i < it.prefills.size(); ++i) {
    if (i) row += ';';
    row += std::to_string(it.prefills[i].new_tokens);
    row += ':';
    row += std::to_string(it.prefills[i].context);
    row += it.prefills[i].completes ? ":1" : ":0";
  }
  row += ',';
  for (size_t i = 0; i < it.decodes.size(); ++i) {
    if (i) row += ';';
    row += std::to_string(it.decodes[i]);
  }
  row += ',';
  row += std::to_string(it.logit_rows());
  row += ',';
  row += std::to_string(m.launches);
  row += m.pages_reused ? ",1," : ",0,";
  char nums[160];
  std::snprintf(nums, sizeof nums, "%.3f,%.3f,%.3f,%.3f\n", m.predicted_us, 1e3 * ms[ms.size() / 2], 1e3 * ms.front(),
                1e3 * ms.back());
  row += nums;
  return row;
}

}  // namespace servesim::kernels
