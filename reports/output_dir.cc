#include "reports/output_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/core/error.h"

namespace servesim {
namespace fs = std::filesystem;

void ensure_output_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(fmt::format("{}: cannot be used as an output folder: it exists and is not a folder", dir));
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create output folder: {}", dir, ec.message()));
}

OutputLock::OutputLock(const std::string& dir, Mode mode) : dir_(dir) {
  const std::string lock = (fs::path(dir) / kLockFile).string();
  if (mode == Mode::kExclusive) {
    ensure_output_dir(dir);
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  } else {
    if (!fs::is_directory(dir)) throw InputError(fmt::format("{}: not a folder", dir));
    fd_ = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0 && errno == ENOENT) return;  // never written by servesim: nothing to wait for
  }
  if (fd_ < 0) throw InputError(fmt::format("{}: cannot open lock file: {}", lock, std::strerror(errno)));
  if (::flock(fd_, (mode == Mode::kExclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw InputError(fmt::format("{}: cannot lock: {}", lock, std::strerror(err)));
    throw InputError(fmt::format(
        "{}: the folder is in use by another servesim process (it holds {}); wait for it to finish or choose "
        "another folder",
        dir, lock));
  }
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw InputError(fmt::format("{}: cannot create file: {}", path_, std::strerror(errno)));
}

OutputFile::~OutputFile() {
  if (committed_) return;
  if (f_) std::fclose(f_);
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void OutputFile::fail(const char* what, int err) {
  if (f_) std::fclose(f_);
  f_ = nullptr;
  std::error_code ec;
  fs::remove(tmp_, ec);
  committed_ = true;  // nothing left to clean up
  throw InputError(fmt::format("{}: {} failed: {}", path_, what, std::strerror(err ? err : EIO)));
}

void OutputFile::write(std::string_view data) {
  SIM_CHECK(f_ && !committed_, "{}: write after commit", path_);
  if (data.empty()) return;
  errno = 0;
  if (std::fwrite(data.data(), 1, data.size(), f_) != data.size()) fail("write", errno);
}

void OutputFile::commit() {
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

void write_file(const std::string& path, std::string_view content) {
  OutputFile f(path);
  f.write(content);
  f.commit();
}

void remove_outputs(const std::string& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    for (const std::string& n : {name, name + ".tmp"}) {
      const fs::path p = fs::path(dir) / n;
      std::error_code ec;
      fs::remove(p, ec);
      if (ec) throw InputError(fmt::format("{}: cannot remove the output of an earlier run: {}", p.string(), ec.message()));
    }
}

}  // namespace servesim
