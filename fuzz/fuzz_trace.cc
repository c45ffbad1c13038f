// libFuzzer target for one trace reader of the registry (traces/readers/
// trace_reader.cc): the format name comes from SERVESIM_FUZZ_FORMAT at compile
// time (fuzz/CMakeLists.txt builds one target per registered format). Each
// input is read three ways — strict, skip_bad_rows, sort — and then through
// `trace stats`. Bad input must end in InputError; any other exception, crash
// or sanitizer report is a finding. No file is written: the strict read goes
// through the buffered stream path (fmemopen, 4 KiB buffer), the other three
// read the input from memory (LineReader::from_text). Writing the input to a
// file and opening it four times with a 1 MiB buffer held the target to ~35
// executions/s under ASan.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string_view>

#include "sim/core/error.h"
#include "traces/readers/trace_reader.h"
#include "traces/readers/trace_stats.h"

#ifndef SERVESIM_FUZZ_FORMAT
#error "define SERVESIM_FUZZ_FORMAT to a registered trace format name"
#endif

namespace {

constexpr bool kJson = std::string_view(SERVESIM_FUZZ_FORMAT) == "mooncake" ||
                       std::string_view(SERVESIM_FUZZ_FORMAT) == "native_jsonl";

servesim::TraceReadOptions options(bool skip, bool sort) {
  servesim::TraceReadOptions opt;
  opt.format = SERVESIM_FUZZ_FORMAT;
  opt.skip_bad_rows = skip;
  opt.sort = sort;
  return opt;
}

void drain(std::unique_ptr<servesim::LineReader> lines, bool skip, bool sort) {
  try {
    auto r = servesim::open_trace(std::move(lines), options(skip, sort));
    servesim::TraceRow row;
    while (r->next(row)) {
    }
  } catch (const servesim::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const char* name = kJson ? "fuzz.jsonl" : "fuzz.csv";
  // Strict, through the buffered stream path a file takes (fill(), sliding
  // the tail, growing the 4 KiB buffer for a line as long as the input) —
  // fmemopen() instead of a file on disk: no system calls per input.
  if (std::FILE* f = size ? ::fmemopen(const_cast<std::uint8_t*>(data), size, "rb") : nullptr) {
    drain(servesim::LineReader::from_stream(name, f, 4096), false, false);
  } else {
    drain(servesim::LineReader::from_text(name, text), false, false);
  }
  drain(servesim::LineReader::from_text(name, text), true, false);
  drain(servesim::LineReader::from_text(name, text), false, true);
  try {
    (void)servesim::format_trace_stats(
        servesim::compute_trace_stats(servesim::open_trace(servesim::LineReader::from_text(name, text),
                                                           options(true, false))));
  } catch (const servesim::InputError&) {
  }
  return 0;
}
