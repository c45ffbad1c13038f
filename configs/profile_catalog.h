// Where measured kernel profiles live, per GPU and engine stack, and which one
// `cost_model.stack: auto` picks (docs/costmodel.md, "Engine stacks").
//
// Layout under profile_dir() (scenario_config.h), per lowercased hardware name:
//   <hw>/profile.csv           our own bench's profile (stack `servesim`)
//   <hw>/<stack>/profile.csv   a profile imported from public measurements
//                              (`servesim calibrate import`), e.g. vllm-0.14, vidur-2024
// A profile belongs to one (GPU, stack) pair: stacks are never mixed or
// averaged; a stack that lacks a part borrows it from another, marked in the
// profile (measured_import.h).
//
// `auto` takes the first stack of auto_stack_order() that has a profile for the
// GPU: our own measurement first, then the public stacks (newest first).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace servesim {

inline constexpr const char* kOwnStack = "servesim";

// auto's order of preference.
const std::vector<std::string>& auto_stack_order();

// The profile path of `stack` for hardware `hardware_name` (no existence check).
std::string stack_profile_path(const std::string& hardware_name, const std::string& stack);

// The profile `stack` (auto or a name) selects for the hardware: its path, or ""
// when no such profile exists. `chosen` receives the stack (auto resolved).
std::string find_stack_profile(const std::string& hardware_name, const std::string& stack, std::string* chosen = nullptr);

struct ShippedProfile {
  std::string hardware, stack, path;
  std::size_t rows = 0;
  bool is_default = false;  // what auto picks for this hardware
};
// Every profile under profile_dir(), sorted by hardware then stack.
std::vector<ShippedProfile> shipped_profiles();

}  // namespace servesim
