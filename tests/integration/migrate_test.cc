// `hookrelay migrate` (issue 29) on the real binary: it lists and applies what a store is
// behind by, on SQLite and on PostgreSQL; with [store] migrate = "manual", serve refuses a
// PostgreSQL database behind its schema until `migrate` ran.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "support/integration_test.h"
#include "support/pg_cluster.h"

namespace hookrelay {
namespace {

using std::chrono::seconds;
using testing::RunProgram;
using testing::RunResult;

class MigrateTest : public testing::IntegrationTest {
 protected:
  RunResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), HOOKRELAY_BINARY);
    return RunProgram(args, {}, seconds(60));
  }
};

TEST_F(MigrateTest, ListsAndAppliesWhatAnEmbeddedStoreIsBehindBy) {
  RunResult none = Cli({"migrate", "--dry-run", "--data", data_dir()});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no store in"), std::string::npos) << none.err;
  ASSERT_NO_FATAL_FAILURE(StartServer(""));
  RunResult locked = Cli({"migrate", "--data", data_dir()});
  EXPECT_EQ(locked.exit_code, 0) << "nothing to apply: the lock is not even needed";
  EXPECT_NE(locked.out.find("Up to date"), std::string::npos) << locked.out;
  StopServer();
  // Back to schema 8, as the previous release left it.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((data_dir() + "/hookrelay.db").c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db,
                           "DROP TABLE data_keys; DELETE FROM schema_migrations WHERE version = 9;"
                           " PRAGMA user_version = 8;",
                           nullptr, nullptr, &err),
              SQLITE_OK)
        << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  RunResult dry = Cli({"migrate", "--dry-run", "--data", data_dir()});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("schema 8, this build's is 9"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("Would apply:\n  9  secrets at rest"), std::string::npos) << dry.out;
  EXPECT_NE(Cli({"migrate", "--dry-run", "--data", data_dir()}).out.find("schema 8"),
            std::string::npos)
      << "a dry run changes nothing";
  RunResult applied = Cli({"migrate", "--data", data_dir()});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_NE(applied.out.find("Done: schema 9."), std::string::npos) << applied.out;
  EXPECT_NE(Cli({"migrate", "--dry-run", "--data", data_dir()}).out.find("Up to date"),
            std::string::npos);
}

TEST_F(MigrateTest, ManualMigrationOnPostgresRefusesToStartUntilMigrateRan) {
  std::string error;
  testing::PgCluster* pg = testing::SharedPgCluster(&error);
  ASSERT_NE(pg, nullptr) << error;
  const std::string url = pg->CreateDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  const std::string config = dir_.path() + "/manual.toml";
  testing::WriteFile(config, "[store]\nurl = \"" + url + "\"\nmigrate = \"manual\"\n");
  RunResult refused =
      RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--config", config,
                  "--data", data_dir()},
                 {}, seconds(30),
                 {{"HOOKRELAY_ADMIN_TOKEN", admin_token_},
                  {"HOOKRELAY_MASTER_KEY", testing::HookrelayServer::kTestMasterKey}});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("has schema version 0 and this build needs"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("run `hookrelay migrate`"), std::string::npos);
  EXPECT_EQ(refused.err.find('@'), std::string::npos) << "no user or password of the URL";

  RunResult dry = Cli({"migrate", "--dry-run", "--config", config});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("schema 0, this build's is"), std::string::npos) << dry.out;
  RunResult applied = Cli({"migrate", "--config", config});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_NE(applied.out.find("Done: schema"), std::string::npos) << applied.out;

  ASSERT_NO_FATAL_FAILURE(StartServer(testing::ReadFile(config)));
  EXPECT_EQ(Api("GET", "/api/v1/events").status, 200);
}

}  // namespace
}  // namespace hookrelay
