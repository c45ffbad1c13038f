// libFuzzer target for the sweep spec parser: load_sweep() on the input as a
// sweep YAML file, then select_shard() with a fixed shard. Bad input must end
// in InputError; anything else is a finding.
#include <cstdint>

#include "configs/sweep_spec.h"
#include "fuzz/fuzz_input_file.h"
#include "sim/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = servesim::fuzz::write_input(data, size, ".yaml");
  try {
    servesim::SweepSpec s = servesim::load_sweep(path);
    (void)servesim::select_shard(s.points, "1/2");
  } catch (const servesim::InputError&) {
  }
  return 0;
}
