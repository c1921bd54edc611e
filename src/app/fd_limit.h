#pragma once

#include <cstdint>
#include <string>

namespace hookrelay::app {

// Descriptors kept for everything but inbound connections: the delivery sender's connections
// (at least kSenderReservedDescriptors), refusals being answered (64), the store's files, logs
// and pipes.
inline constexpr uint64_t kReservedDescriptors = 640;
inline constexpr uint64_t kSenderReservedDescriptors = 512;

// How many inbound connections fit under an open-file limit of `fd_limit`: `wanted`, or fewer
// (at least 1) when the limit leaves less room than that after kReservedDescriptors. Pure.
int ConnectionsWithinFdLimit(int wanted, uint64_t fd_limit);

// How many outbound connections the delivery sender may hold under an open-file limit of
// `fd_limit` when the server may hold `server_connections`: `wanted`, or what the server leaves
// if less (but not less than kSenderReservedDescriptors, which kReservedDescriptors keeps). An
// unknown limit (0) leaves `wanted`. Pure.
int SenderConnectionsWithinFdLimit(int wanted, int server_connections, uint64_t fd_limit);

struct ConnectionLimit {
  int max_connections = 0;  // what to configure the server with
  uint64_t fd_limit = 0;    // the process's soft open-file limit afterwards
  std::string note;         // non-empty when max_connections had to be lowered: say why
};

// Raises the process's soft open-file limit (RLIMIT_NOFILE) to its hard limit, then fits
// `wanted` connections under it. Past the limit the kernel refuses new descriptors before the
// server can pick an idle connection to close, so a configured max_connections above it would
// not hold.
ConnectionLimit FitConnectionsToFdLimit(int wanted);

}  // namespace hookrelay::app
