// Output folders: how servesim writes a folder so that no reader ever sees a
// half-written, interleaved or stale result (docs/failure.md).
//
//  - OutputLock: an flock(2) on <dir>/.servesim.lock, held while a command
//    writes the folder (exclusive) or reads it as input (shared). A second
//    servesim process that wants a conflicting lock fails at once with an
//    InputError naming the folder and its lock file; nobody waits. The lock
//    is released when the OutputLock is destroyed or the process dies; the
//    lock file itself stays, empty (so a folder's files stay byte-identical
//    from run to run; deleting it on release would let two processes lock
//    different inodes).
//  - OutputFile and write_file() (sim/core/output_file.h, so that traces/
//    and policies/ can write their results the same way): write <path>.tmp,
//    check every write, the flush and the close, and rename to <path>.
//  - remove_outputs(): deletes the named files of an earlier run (and their
//    temporaries) from a folder: only those names, never anything else.
//
// Completion markers (kDoneMarker) are written with write_file() after every
// other output of the folder was committed, and removed first by
// remove_outputs() (list it first), so a folder is complete exactly when its
// marker exists.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/output_file.h"

namespace servesim {

inline constexpr const char* kDoneMarker = "DONE";
inline constexpr const char* kLockFile = ".servesim.lock";

// Creates `dir` (and its parents) when missing. InputError naming the path
// when it exists but is not a folder, or cannot be created.
void ensure_output_dir(const std::string& dir);

class OutputLock {
 public:
  enum class Mode { kExclusive, kShared };
  // kExclusive creates the folder first (ensure_output_dir); kShared requires
  // it to exist. Throws InputError when another process holds a conflicting
  // lock (or the lock file cannot be opened), naming the folder.
  explicit OutputLock(const std::string& dir, Mode mode = Mode::kExclusive);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int fd_ = -1;
};

// Removes <dir>/<name> and <dir>/<name>.tmp for every name, in order (put the
// completion marker first). Missing files are fine; InputError when one exists
// and cannot be removed.
void remove_outputs(const std::string& dir, const std::vector<std::string>& names);

}  // namespace servesim
