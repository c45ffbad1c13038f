// Test helpers shared by the configs/ tests: one temporary folder per test
// process (CTest runs a binary's cases as parallel processes; each gets its
// own folder, removed when the process ends) and the synthetic calibration
// profile (costmodel/synthetic_profile.h, default options) written into it
// once per process.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <unistd.h>

#include "costmodel/synthetic_profile.h"

namespace servesim::testing {

inline std::filesystem::path temp_dir() {
  static const struct Dir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("servesim_configs_test_" + std::to_string(getpid()));
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

// The path of the synthetic profile (SyntheticOptions{}), written on first use.
inline std::string synthetic_profile_path() {
  static const std::string path = [] {
    std::filesystem::path p = temp_dir() / "synthetic_profile.csv";
    std::ofstream(p) << synthetic_profile_csv(SyntheticOptions{});
    return p.string();
  }();
  return path;
}

}  // namespace servesim::testing
