#include "app/fd_limit.h"

#include <gtest/gtest.h>

namespace hookrelay::app {
namespace {

TEST(FdLimitTest, ConnectionsFitUnderTheOpenFileLimit) {
  EXPECT_EQ(ConnectionsWithinFdLimit(10000, 1048576), 10000);
  EXPECT_EQ(ConnectionsWithinFdLimit(10000, 10000 + kReservedDescriptors), 10000);
  EXPECT_EQ(ConnectionsWithinFdLimit(10000, 10000 + kReservedDescriptors - 1), 9999);
  EXPECT_EQ(ConnectionsWithinFdLimit(10000, 1024), static_cast<int>(1024 - kReservedDescriptors));
  EXPECT_EQ(ConnectionsWithinFdLimit(10000, 100), 1);  // never 0
}

TEST(FdLimitTest, SenderConnectionsFitBesideTheServers) {
  EXPECT_EQ(SenderConnectionsWithinFdLimit(4096, 10000, 1048576), 4096);
  EXPECT_EQ(SenderConnectionsWithinFdLimit(4096, 10000, 0), 4096);  // unknown limit
  // 20000 descriptors: 10000 for the server, 128 for the rest, 9872 left.
  EXPECT_EQ(SenderConnectionsWithinFdLimit(20000, 10000, 20000), 9872);
  // A low limit: the server was fitted to leave kReservedDescriptors; the sender keeps its 512.
  EXPECT_EQ(SenderConnectionsWithinFdLimit(4096, ConnectionsWithinFdLimit(10000, 1024), 1024),
            static_cast<int>(kSenderReservedDescriptors));
  EXPECT_EQ(SenderConnectionsWithinFdLimit(4096, 10000, 100), 512);
  EXPECT_EQ(SenderConnectionsWithinFdLimit(100, 10, 1048576), 100);
}

TEST(FdLimitTest, FitsTheConfiguredLimitToThisProcess) {
  ConnectionLimit small = FitConnectionsToFdLimit(10);
  EXPECT_EQ(small.max_connections, 10);
  EXPECT_TRUE(small.note.empty());
  ConnectionLimit huge = FitConnectionsToFdLimit(1000000000);
  EXPECT_LT(huge.max_connections, 1000000000);
  EXPECT_NE(huge.note.find("max_connections lowered from 1000000000"), std::string::npos);
  EXPECT_NE(huge.note.find("the open-file limit is " + std::to_string(huge.fd_limit)),
            std::string::npos)
      << huge.note;
}

}  // namespace
}  // namespace hookrelay::app
