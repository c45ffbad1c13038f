// BatchRecorder: `servesim run --record-batches FILE [--record-every K]`
// writes every K-th iteration the engine executes, over
// all workers in the order the iterations start, as one CSV row: the worker,
// its start, the predicted duration, the attention methods, every prefill
// chunk (new tokens, tokens already in KV, whether it completes the prompt),
// every decode's context length, and the predicted time split by the parts of
// the operation list (CostModel::parts(), costmodel/operation_list.h; the
// wiring, configs/run_builder.cc, passes them in as a function, since reports/
// does not include the cost model). The format is documented in docs/reports.md ("Batch record"); its reader is
// kernels/replay/batch_record.h (the GPU replay reads it without the
// simulator's libraries).
//
// Contract: streaming (a row is formatted into a bounded buffer and flushed
// to the file whenever the buffer passes 64 KiB: memory does not grow with
// the run); deterministic (the same run writes the same bytes); written
// through OutputFile (reports/output_dir.h): the file appears under its name
// only after close() committed it, every write checked. It observes only:
// the run simulates exactly the same thing with or without it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reports/output_dir.h"
#include "sim/core/request.h"
#include "sim/core/time.h"
#include "sim/run_observer.h"

namespace servesim {

struct BatchRecordWorker {
  // The predicted µs of each part (BatchRecordOptions::parts, in order) for a batch:
  // the engine's cost model's parts().
  std::function<std::vector<double>(const BatchShape&)> parts;
  std::string cost_identity;              // the cost model's identity(), for the header
  std::string attention;                  // short form, no commas: "dense/dense/none" (prefill/decode/kv)
  std::string attention_detail;           // AttentionMethods::describe(), for the header
  std::string hardware;
};

struct BatchRecordOptions {
  std::string path;
  std::int64_t every = 1;  // record iterations 0, K, 2K, ... (counted over all workers); >= 1
  std::string model;       // the model's name (the replay's --model)
  int tp = 1;
  std::vector<std::string> parts;  // part names, one <name>_us column each (kPartNames)
};

// A RunObserver that only listens to iterations (the run's observer list forwards them).
class BatchRecorder final : public RunObserver {
 public:
  // InputError when every < 1 or the file cannot be created.
  BatchRecorder(BatchRecordOptions options, std::vector<BatchRecordWorker> workers);
  void on_request(const RequestOutcome&) override {}
  void on_iteration(WorkerId w, Time start, Time duration, const BatchShape& batch) override;
  void close();  // flush + commit; InputError naming the file on a write error
  std::int64_t iterations_seen() const { return seen_; }
  std::int64_t iterations_written() const { return written_; }

 private:
  void flush();
  BatchRecordOptions opt_;
  std::vector<BatchRecordWorker> workers_;
  OutputFile file_;
  fmt::memory_buffer buf_;
  std::int64_t seen_ = 0, written_ = 0;
};

}  // namespace servesim
