// OutputFile: writes a result file so that no reader ever sees it half
// written. It writes <path>.tmp, checks every write, the flush and the close,
// and renames the temporary to <path> in commit(). Destroyed without commit()
// (an exception on the way) it removes the temporary, so <path> only ever
// holds a complete file. A full disk is an InputError naming the file, never
// a silently short file. write_file() is the whole of one string through it.
//
// Header-only in sim/core so that every module (traces/ writes native traces,
// policies/ LTR models, reports/ run folders: reports/output_dir.h) can use
// it; folder locking and stale-output removal stay in reports/output_dir.h.
#pragma once
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "sim/core/error.h"

namespace servesim {

class OutputFile {
 public:
  // Creates <path>.tmp; InputError naming path on failure.
  explicit OutputFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
    f_ = std::fopen(tmp_.c_str(), "wb");
    if (!f_) throw InputError(fmt::format("{}: cannot create file: {}", path_, std::strerror(errno)));
  }
  // Not committed: closes and removes the temporary.
  ~OutputFile() {
    if (committed_) return;
    if (f_) std::fclose(f_);
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // InputError on a short write.
  void write(std::string_view data) {
    SIM_CHECK(f_ && !committed_, "{}: write after commit", path_);
    if (data.empty()) return;
    errno = 0;
    if (std::fwrite(data.data(), 1, data.size(), f_) != data.size()) fail("write", errno);
  }
  // flush + close + rename, every step checked; idempotent.
  void commit() {
    if (committed_) return;
    errno = 0;
    if (std::fflush(f_) != 0 || std::ferror(f_)) fail("write", errno);
    std::FILE* f = f_;
    f_ = nullptr;
    errno = 0;
    if (std::fclose(f) != 0) fail("close", errno);
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename", errno);
    committed_ = true;
  }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const char* what, int err) {
    if (f_) std::fclose(f_);
    f_ = nullptr;
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
    committed_ = true;  // nothing left to clean up
    throw InputError(fmt::format("{}: {} failed: {}", path_, what, std::strerror(err ? err : EIO)));
  }

  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
  bool committed_ = false;
};

// The whole of `content` to `path`, through an OutputFile.
inline void write_file(const std::string& path, std::string_view content) {
  OutputFile f(path);
  f.write(content);
  f.commit();
}

}  // namespace servesim
