#include "store/sqlite/data_dir_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>

namespace hookrelay::store {

namespace {

Status NotARegularFile(const std::string& path) {
  return Status::FailedPrecondition(
      path + " is not a regular file; hookrelay keeps its lock there: remove it");
}

}  // namespace

std::optional<pid_t> DataDirLock::ParsePid(std::string_view content) {
  if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
  if (content.empty() || content.size() > 10) return std::nullopt;
  for (char c : content) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t pid = 0;
  auto [end, ec] = std::from_chars(content.data(), content.data() + content.size(), pid);
  if (ec != std::errc() || end != content.data() + content.size() || pid <= 0 || pid > INT_MAX) {
    return std::nullopt;
  }
  return static_cast<pid_t>(pid);
}

Result<std::shared_ptr<DataDirLock>> DataDirLock::Acquire(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("data directory is empty", "dir");
  struct stat dir_stat;
  if (::stat(dir.c_str(), &dir_stat) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      return Status::InvalidArgument("data directory " + dir + " does not exist", "dir");
    }
    return Status::Unavailable("data directory " + dir + ": " + std::strerror(err));
  }
  if (!S_ISDIR(dir_stat.st_mode)) return Status::InvalidArgument("not a directory: " + dir, "dir");

  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  // O_NOFOLLOW: a symbolic link planted as hookrelay.lock is refused, never followed (the PID
  // is written into the file). O_NONBLOCK: a FIFO planted there cannot block the open.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) {
      return Status::FailedPrecondition(path +
                                        " is a symbolic link; hookrelay does not follow it (it "
                                        "writes its PID there): remove it");
    }
    if (err == EISDIR || err == ENXIO) return NotARegularFile(path);
    std::string hint;
    if (err == EACCES || err == EROFS) hint = " (the data directory must be writable by this user)";
    return Status::Unavailable("cannot open the lock file " + path + ": " + std::strerror(err) +
                               hint);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return NotARegularFile(path);
  }
  if (st.st_nlink != 1) {
    ::close(fd);
    return Status::FailedPrecondition(
        path + " has " + std::to_string(st.st_nlink) +
        " hard links; hookrelay writes its PID there and would change the other file too: "
        "remove it (hookrelay makes a new one)");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) {
      ::close(fd);
      return Status::Unavailable("cannot lock " + path + ": " + std::strerror(err));
    }
    // The holder's PID, named only when that process is alive: the file may still hold the PID
    // of a dead hookrelay while another program holds the lock. A hookrelay that has just taken
    // the lock writes its PID right after: wait for it a little (up to 100 ms).
    pid_t alive = 0;
    for (int tries = 0; tries < 11 && alive == 0; ++tries) {
      if (tries > 0) ::usleep(10'000);
      char buf[32];
      const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
      const std::optional<pid_t> pid =
          n > 0 ? ParsePid(std::string_view(buf, static_cast<size_t>(n))) : std::nullopt;
      if (pid.has_value() && (::kill(pid.value(), 0) == 0 || errno == EPERM)) alive = pid.value();
    }
    ::close(fd);
    const std::optional<pid_t> holder = alive > 0 ? std::optional<pid_t>(alive) : std::nullopt;
    if (!holder) {
      return Status::FailedPrecondition("data directory " + dir +
                                        " is in use by another process, which holds the lock on " +
                                        path + " but wrote no PID in it: find it with `fuser " +
                                        path + "`, stop it, or use another data directory");
    }
    const std::string pid = std::to_string(*holder);
    if (*holder == ::getpid()) {
      return Status::FailedPrecondition("data directory " + dir +
                                        " is already in use by this process (PID " + pid +
                                        ", lock file " + path + ")");
    }
    return Status::FailedPrecondition(
        "data directory " + dir + " is in use by hookrelay process " + pid + " (lock file " + path +
        "): stop that process first, or give this one another data directory");
  }
  // Ours now. Overwrite in place, then cut: a reader never sees an empty file.
  const std::string content = std::to_string(::getpid()) + "\n";
  if (::pwrite(fd, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size()) ||
      ::ftruncate(fd, static_cast<off_t>(content.size())) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Unavailable("cannot write " + path + ": " + std::strerror(err));
  }
  return std::shared_ptr<DataDirLock>(new DataDirLock(dir, fd, dir_stat.st_dev, dir_stat.st_ino));
}

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool DataDirLock::Holds(const std::string& dir) const {
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

}  // namespace hookrelay::store
