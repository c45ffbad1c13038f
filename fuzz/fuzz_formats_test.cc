// The fuzz targets cover the whole trace-format registry: the list in
// fuzz/CMakeLists.txt (passed as SERVESIM_FUZZ_FORMATS) equals trace_formats().
#include <doctest/doctest.h>

#include <string>

#include "traces/readers/trace_reader.h"

TEST_CASE("every registered trace format has a fuzz target") {
  std::string names;
  for (const auto& f : servesim::trace_formats()) names += (names.empty() ? "" : ",") + f.name;
  CHECK(names == std::string(SERVESIM_FUZZ_FORMATS));
}
