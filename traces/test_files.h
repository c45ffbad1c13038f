// Test helpers for traces/*_test.cc: small hand-made trace files written into
// a fresh temporary folder per test, the path of the shared traces, and
// reading a trace to the end (count_rows).
#pragma once
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "sim/core/error.h"
#include "sim/core/test_util.h"  // contains(), slurp()
#include "traces/readers/trace_reader.h"

namespace servesim::testing {

inline std::string shared_trace(const std::string& rel) { return std::string(SERVESIM_SHARED_DIR) + "/traces/" + rel; }

// A temporary folder removed at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("servesim_traces_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  // Writes `content` byte for byte to `name` in the folder; returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    std::string p = (path_ / name).string();
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + p);
    std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
    return p;
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The message of the InputError `f` throws ("" if it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// How many rows the reader of `path` yields (with `opt`), read to the end.
inline std::int64_t count_rows(const std::string& path, TraceReadOptions opt = {}) {
  auto r = open_trace(path, opt);
  TraceRow row;
  std::int64_t n = 0;
  while (r->next(row)) ++n;
  return n;
}

}  // namespace servesim::testing
