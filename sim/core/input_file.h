// require_regular_file(): inputs (scenario, sweep, hardware and model YAML, traces,
// profiles) must be regular files. A FIFO or a character device would block open() or
// read() forever, a folder fails later with a less clear message: refused at once, with
// an InputError naming the path.
#pragma once
#include <sys/stat.h>

#include <string>

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

inline void require_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // missing: the open() that follows names the error
  if (S_ISREG(st.st_mode)) return;
  const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  throw InputError(fmt::format("{}: is {}, not a regular file", path, kind));
}

}  // namespace servesim
