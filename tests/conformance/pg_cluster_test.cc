// The test cluster itself (tests/support/pg_cluster.h): it starts without PATH or a system
// service, hands out separate databases, and runs its server as a user PostgreSQL accepts.
#include "support/pg_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace hookrelay::testing {
namespace {

TEST(PgClusterTest, StartsAndHandsOutSeparateDatabases) {
  std::string error;
  PgCluster* cluster = SharedPgCluster(&error);
  ASSERT_NE(cluster, nullptr) << error;
  EXPECT_NE(cluster->bin_dir().find("/usr/lib/postgresql/"), std::string::npos)
      << cluster->bin_dir();
  const std::string a = cluster->CreateDatabase(&error);
  ASSERT_FALSE(a.empty()) << error;
  const std::string b = cluster->CreateDatabase(&error);
  ASSERT_FALSE(b.empty()) << error;
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("postgres://postgres@127.0.0.1:" + std::to_string(cluster->port()) + "/", 0),
            0u)
      << a;
  const std::string db_a = a.substr(a.rfind('/') + 1);
  const std::string db_b = b.substr(b.rfind('/') + 1);
  EXPECT_EQ(cluster->Exec(db_a, "CREATE TABLE only_in_a (x int)"), "");
  EXPECT_EQ(cluster->Exec(db_a, "SELECT * FROM only_in_a"), "");
  EXPECT_NE(cluster->Exec(db_b, "SELECT * FROM only_in_a"), "") << "databases are separate";
  // The server refuses root: as root, it runs as `postgres`.
  const std::string who = ReadFile(cluster->data_dir() + "/postmaster.pid");
  EXPECT_FALSE(who.empty()) << "the server is running";
}

}  // namespace
}  // namespace hookrelay::testing
