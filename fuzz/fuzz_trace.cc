// libFuzzer target for one trace reader of the registry (traces/readers/
// trace_reader.cc): the format name comes from SERVESIM_FUZZ_FORMAT at compile
// time (fuzz/CMakeLists.txt builds one target per registered format). Each
// input is read three ways — strict, skip_bad_rows, sort — and then through
// `trace stats`. Bad input must end in InputError; any other exception, crash
// or sanitizer report is a finding.
#include <cstdint>

#include "fuzz/fuzz_input_file.h"
#include "sim/core/error.h"
#include "traces/readers/trace_reader.h"
#include "traces/readers/trace_stats.h"

#ifndef SERVESIM_FUZZ_FORMAT
#error "define SERVESIM_FUZZ_FORMAT to a registered trace format name"
#endif

namespace {

void read_all(const std::string& path, bool skip, bool sort) {
  servesim::TraceReadOptions opt;
  opt.format = SERVESIM_FUZZ_FORMAT;
  opt.skip_bad_rows = skip;
  opt.sort = sort;
  try {
    auto r = servesim::open_trace(path, opt);
    servesim::TraceRow row;
    while (r->next(row)) {
    }
  } catch (const servesim::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bool json = std::string_view(SERVESIM_FUZZ_FORMAT) == "mooncake" ||
                    std::string_view(SERVESIM_FUZZ_FORMAT) == "native_jsonl";
  const std::string& path = servesim::fuzz::write_input(data, size, json ? ".jsonl" : ".csv");
  read_all(path, false, false);
  read_all(path, true, false);
  read_all(path, false, true);
  try {
    servesim::TraceReadOptions opt;
    opt.format = SERVESIM_FUZZ_FORMAT;
    opt.skip_bad_rows = true;
    (void)servesim::format_trace_stats(servesim::compute_trace_stats(path, opt));
  } catch (const servesim::InputError&) {
  }
  return 0;
}
