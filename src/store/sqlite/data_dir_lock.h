#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace hookrelay::store {

// The lock that makes a data directory belong to one process: an exclusive flock(2) on
// DIR/hookrelay.lock, held while this object lives. The kernel drops it when the process ends,
// however it ends (kill -9 included), so a lock is never stale; the file stays and the next
// holder takes it over. The file holds the holder's PID (decimal, then a newline) so that a
// refused process can say who holds the directory. The PID is only a note for people: the flock,
// not the file's content, decides who holds the directory.
//
// flock locks belong to an open file description: a second DataDirLock on the same directory is
// refused in this process too.
class DataDirLock {
 public:
  static constexpr const char* kFileName = "hookrelay.lock";

  // Takes the lock of `dir`, which must be an existing directory. DIR/hookrelay.lock is created
  // (mode 0600) when missing. Errors:
  // - kFailedPrecondition when another process (or another DataDirLock here) holds the
  //   directory: "data directory DIR is in use by hookrelay process PID (lock file
  //   DIR/hookrelay.lock): …", naming only a live process (the file may hold a dead one's);
  //   when the file names no live process (after waiting up to 100 ms for a holder that has
  //   just taken the lock to write its PID), the message says so. Also when
  //   DIR/hookrelay.lock is a symbolic link (never followed), not a regular file, or a file with
  //   other hard links (it is written to: another file must not be clobbered through it);
  // - kInvalidArgument when `dir` is empty or not a directory;
  // - kUnavailable when the file cannot be created or written (a read-only directory, …).
  static Result<std::shared_ptr<DataDirLock>> Acquire(const std::string& dir);

  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

  const std::string& dir() const { return dir_; }
  // True when `dir` names the directory this lock holds (the same inode, however spelt).
  bool Holds(const std::string& dir) const;

  // The PID a lock file's content names ("1234\n"); nullopt for anything else (empty, not
  // digits, out of range). Pure.
  static std::optional<pid_t> ParsePid(std::string_view content);

 private:
  DataDirLock(std::string dir, int fd, dev_t dev, ino_t ino)
      : dir_(std::move(dir)), fd_(fd), dev_(dev), ino_(ino) {}

  std::string dir_;
  int fd_ = -1;
  dev_t dev_ = 0;  // the directory's
  ino_t ino_ = 0;
};

}  // namespace hookrelay::store
