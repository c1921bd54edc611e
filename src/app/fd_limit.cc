#include "app/fd_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <limits>

namespace hookrelay::app {

int ConnectionsWithinFdLimit(int wanted, uint64_t fd_limit) {
  if (fd_limit <= kReservedDescriptors) return 1;
  const uint64_t room = fd_limit - kReservedDescriptors;
  return static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(std::max(wanted, 1)), room));
}

int SenderConnectionsWithinFdLimit(int wanted, int server_connections, uint64_t fd_limit) {
  if (fd_limit == 0) return wanted;
  const uint64_t others = kReservedDescriptors - kSenderReservedDescriptors +
                          static_cast<uint64_t>(std::max(server_connections, 0));
  const uint64_t room =
      std::max(fd_limit > others ? fd_limit - others : 0, kSenderReservedDescriptors);
  return static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(std::max(wanted, 1)), room));
}

ConnectionLimit FitConnectionsToFdLimit(int wanted) {
  ConnectionLimit out;
  out.max_connections = wanted;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return out;  // unknown: trust the setting
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  out.fd_limit = limit.rlim_cur == RLIM_INFINITY ? std::numeric_limits<uint64_t>::max()
                                                 : static_cast<uint64_t>(limit.rlim_cur);
  out.max_connections = ConnectionsWithinFdLimit(wanted, out.fd_limit);
  if (out.max_connections < wanted) {
    out.note = "max_connections lowered from " + std::to_string(wanted) + " to " +
               std::to_string(out.max_connections) + ": the open-file limit is " +
               std::to_string(out.fd_limit) + " (raise it with ulimit -n or LimitNOFILE=)";
  }
  return out;
}

}  // namespace hookrelay::app
