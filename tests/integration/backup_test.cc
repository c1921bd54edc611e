// `hookrelay backup` and `restore` (issue 29) on the real binary: a backup taken while events
// arrive never refuses one, holds every event acknowledged before it began, and comes back as a
// working store (with the master key) through restore; restore refuses a non-empty directory, a
// file that does not match its checksum, a newer build's store and a file that is not a store.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <thread>

#include "support/integration_test.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RunProgram;
using testing::RunResult;

class BackupTest : public testing::IntegrationTest {
 protected:
  RunResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), HOOKRELAY_BINARY);
    return RunProgram(args, {}, seconds(60));
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
};

TEST_F(BackupTest, ABackupUnderLoadRestoresEveryEventAcknowledgedBeforeIt) {
  ASSERT_NO_FATAL_FAILURE(StartServer(testing::Config()
                                          .Set("delivery.poll_interval", "50ms")
                                          .Source("src")
                                          .Destination("d", sink_.url("/hooks"))
                                          .Route("src", "d")));
  std::atomic<bool> stop{false};
  std::atomic<int> accepted{0}, refused{0};
  std::thread load([&] {
    HttpConnection conn(server_->port());
    for (int i = 0; !stop.load(); ++i) {
      HttpResponse r = conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}},
                                 "{\"n\": " + std::to_string(i) + "}");
      r.status == 202 ? ++accepted : ++refused;
    }
  });
  ASSERT_TRUE(test::WaitFor([&] { return accepted.load() >= 200; }));
  const int before = accepted.load();
  RunResult backup = Cli({"backup", Path("b.db"), "--data", data_dir()});
  const int during = accepted.load() - before;
  ASSERT_TRUE(test::WaitFor([&] { return accepted.load() >= before + during + 50; }))
      << "ingest goes on after the backup";
  stop = true;
  load.join();
  ASSERT_EQ(backup.exit_code, 0) << backup.err;
  EXPECT_EQ(refused.load(), 0);
  EXPECT_NE(backup.out.find("SHA-256 "), std::string::npos) << backup.out;
  EXPECT_NE(backup.out.find("master key is not in the backup"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(Path("b.db.sha256")));
  EXPECT_EQ(std::filesystem::status(Path("b.db")).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string master_key = testing::ReadFile(data_dir() + "/master.key");
  StopServer();

  RunResult restored = Cli({"restore", Path("b.db"), "--data", Path("restored")});
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  // The restored store, started with the key it was made with: every event acknowledged
  // before the backup began is there.
  server_.reset();
  server_ = std::make_unique<testing::HookrelayServer>(testing::HookrelayServer::Options{
      "",
      Path("restored"),
      {},
      {{"HOOKRELAY_ADMIN_TOKEN", admin_token_}, {"HOOKRELAY_MASTER_KEY", master_key}}});
  ASSERT_TRUE(server_->ok()) << server_->output();
  int64_t events = 0;
  std::string cursor;
  do {
    HttpResponse r = Api("GET", "/api/v1/events?limit=1000" +
                                    (cursor.empty() ? std::string() : "&cursor=" + cursor));
    ASSERT_EQ(r.status, 200) << r.body;
    const json::value page = json::parse(r.body);
    events += static_cast<int64_t>(page.at("items").as_array().size());
    cursor =
        page.at("next_cursor").is_string() ? std::string(page.at("next_cursor").as_string()) : "";
  } while (!cursor.empty());
  EXPECT_GE(events, before);
  EXPECT_LE(events, before + during + 1);
  EXPECT_EQ(Api("GET", "/api/v1/destinations/d").status, 200) << "the catalog, decrypted";
}

TEST_F(BackupTest, RestoreRefusesWhatItCannotUseAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartServer(""));
  ASSERT_EQ(Cli({"backup", Path("b.db"), "--data", data_dir()}).exit_code, 0);
  RunResult again = Cli({"backup", Path("b.db"), "--data", data_dir()});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("exists"), std::string::npos) << again.err;
  RunResult pg = Cli({"backup", Path("x.db"), "--store", "postgres://127.0.0.1:1/x"});
  EXPECT_EQ(pg.exit_code, 2);
  EXPECT_NE(pg.err.find("pg_dump"), std::string::npos) << pg.err;
  RunResult none = Cli({"backup", Path("y.db"), "--data", Path("nothing")});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no store in"), std::string::npos) << none.err;

  // Into a directory that is not empty.
  RunResult busy = Cli({"restore", Path("b.db"), "--data", data_dir()});
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_NE(busy.err.find("is not empty"), std::string::npos) << busy.err;

  // A file that no longer matches its checksum.
  std::filesystem::copy_file(Path("b.db"), Path("changed.db"));
  std::filesystem::copy_file(Path("b.db.sha256"), Path("changed.db.sha256"));
  {
    std::string bytes = testing::ReadFile(Path("changed.db"));
    bytes[bytes.size() - 10] ^= 0x5a;
    testing::WriteFile(Path("changed.db"), bytes);
  }
  RunResult changed = Cli({"restore", Path("changed.db"), "--data", Path("r1")});
  EXPECT_EQ(changed.exit_code, 2);
  EXPECT_NE(changed.err.find("does not match its checksum"), std::string::npos) << changed.err;
  EXPECT_FALSE(std::filesystem::exists(Path("r1")));

  // A newer build's store (no checksum file: the schema is checked all the same).
  std::filesystem::copy_file(Path("b.db"), Path("newer.db"));
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Path("newer.db").c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "PRAGMA user_version = 999", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  RunResult newer = Cli({"restore", Path("newer.db"), "--data", Path("r2")});
  EXPECT_EQ(newer.exit_code, 2);
  EXPECT_NE(newer.err.find("made by a newer hookrelay (schema 999"), std::string::npos)
      << newer.err;
  EXPECT_FALSE(std::filesystem::exists(Path("r2")));

  // Not a store at all.
  testing::WriteFile(Path("notes.txt"), std::string(4096, 'x'));
  RunResult text = Cli({"restore", Path("notes.txt"), "--data", Path("r3")});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.err.find("not a SQLite database hookrelay can read"), std::string::npos)
      << text.err;
  EXPECT_FALSE(std::filesystem::exists(Path("r3")));
}

}  // namespace
}  // namespace hookrelay
