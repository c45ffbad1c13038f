// Reader of a batch record (`servesim run --record-batches FILE`, written by
// reports/batch_recorder.h; format in docs/reports.md, "Batch record").
// Plain C++ with no simulator dependency, so the GPU replay
// (`servesim-kernels replay`) and `servesim calibrate fidelity` share it.
//
// Contract: streaming (next() reads one row; memory is one row), strict: a
// missing or unknown column, a non-numeric or negative count, a malformed
// prefill chunk, or totals that disagree with the lists are a
// BatchRecordError whose message names the file, the line and the field.
#pragma once
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace servesim::kernels {

class BatchRecordError : public std::runtime_error {
 public:
  explicit BatchRecordError(const std::string& msg) : std::runtime_error(msg) {}
};

struct RecordedChunk {
  int64_t new_tokens = 0;
  int64_t context = 0;  // tokens already in KV before the chunk
  bool completes = false;
  bool operator==(const RecordedChunk&) const = default;
};

struct RecordedIteration {
  int64_t iteration = 0;  // index over all workers, in start order
  int64_t worker = 0;
  int64_t start_ns = 0;
  int64_t predicted_ns = 0;
  std::string attention;  // prefill/decode/kv methods, e.g. dense/dense/none
  std::vector<RecordedChunk> prefills;
  std::vector<int64_t> decodes;       // each decode's context length
  std::vector<double> parts_us;       // in the order of BatchRecordHeader::parts

  int64_t prefill_tokens() const;
  int64_t total_tokens() const { return prefill_tokens() + static_cast<int64_t>(decodes.size()); }
  int64_t logit_rows() const;  // decodes + completing chunks
};

struct BatchRecordHeader {
  std::string model;
  int tp = 1;
  int64_t record_every = 1;
  std::vector<std::string> comments;  // every '#' line, without the '# '
  std::vector<std::string> parts;     // part names of the *_us columns
};

class BatchRecordReader {
 public:
  explicit BatchRecordReader(const std::string& path);  // reads the header; BatchRecordError on failure
  const BatchRecordHeader& header() const { return header_; }
  bool next(RecordedIteration* out);  // false at the end of the file

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& msg) const;
  std::string path_;
  std::ifstream in_;
  long line_ = 0;
  BatchRecordHeader header_;
  std::vector<std::string> columns_;
};

// Parses "new:context:completes;..." (empty: none) and "ctx;ctx;..." (empty: none).
// Throw std::invalid_argument with a short reason on malformed text.
std::vector<RecordedChunk> parse_prefill_list(const std::string& s);
std::vector<int64_t> parse_decode_list(const std::string& s);

}  // namespace servesim::kernels
