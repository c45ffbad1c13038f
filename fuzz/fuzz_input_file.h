// Helper for the libFuzzer targets: the parsers under test read files by path,
// so each input is written to one scratch file per process (in $TMPDIR or
// /tmp, named after the pid) and that path is handed to the parser. The file
// is rewritten for every input and removed at exit.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace servesim::fuzz {

inline const std::string& scratch_path(const char* suffix) {
  static const std::string path = [&] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/servesim_fuzz_" + std::to_string(::getpid()) + suffix;
    static std::string* keep = new std::string(p);
    std::atexit([] { std::remove(keep->c_str()); });
    return p;
  }();
  return path;
}

// Writes `data` to the scratch file and returns its path.
inline const std::string& write_input(const std::uint8_t* data, std::size_t size, const char* suffix) {
  const std::string& path = scratch_path(suffix);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace servesim::fuzz
