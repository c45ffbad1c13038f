// libFuzzer target for the scenario parser: load_scenario() on the input as a
// scenario YAML file (shared YAML loading, duplicate-key check, every options
// table and range check), then resolved() as `run` writes it. Bad input must
// end in InputError; anything else is a finding.
#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "configs/scenario_config.h"
#include "fuzz/fuzz_input_file.h"
#include "sim/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = servesim::fuzz::write_input(data, size, ".yaml");
  try {
    servesim::ScenarioConfig c = servesim::load_scenario(path, {});
    // What `run` writes as config.resolved.yaml (the comment above promised it; until
    // 2026-11-23 only load_scenario ran).
    const std::string text = YAML::Dump(c.resolved());
    (void)text;
  } catch (const servesim::InputError&) {
  }
  return 0;
}
