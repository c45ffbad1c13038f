// Small helpers shared by the test files of every module (header-only, tests
// only): read a whole file, and substring search for CHECKs on messages.
// Module-specific helpers stay beside their tests (traces/test_files.h,
// configs/config_test_util.h).
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace servesim::testing {

// The bytes of the file at `p` ("" if it cannot be opened).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace servesim::testing
