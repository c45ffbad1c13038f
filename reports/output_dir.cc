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
