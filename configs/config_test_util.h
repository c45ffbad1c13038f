// Test helpers shared by the configs/ tests: one temporary folder per test
// process (CTest runs a binary's cases as parallel processes; each gets its
// own folder, removed when the process ends) and the synthetic calibration
// profile (costmodel/synthetic_profile.h, default options) written into it
// once per process.
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <unistd.h>

#include "costmodel/synthetic_profile.h"
#include "sim/core/test_util.h"  // slurp

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

// Every regular file of a run folder, (name, bytes), sorted by name.
using FolderFiles = std::vector<std::pair<std::string, std::string>>;
inline FolderFiles folder_files(const std::filesystem::path& dir) {
  FolderFiles files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) files.emplace_back(e.path().filename().string(), slurp(e.path()));
  std::sort(files.begin(), files.end());
  return files;
}

// Two runs wrote the same files, byte for byte (at least `min_files` of them).
inline void check_same_files(const FolderFiles& a, const FolderFiles& b, std::size_t min_files = 5) {
  REQUIRE(a.size() == b.size());
  CHECK(a.size() >= min_files);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i].first);
    CHECK(a[i].first == b[i].first);
    CHECK(a[i].second == b[i].second);
  }
}

}  // namespace servesim::testing
