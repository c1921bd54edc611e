#include "support/pg_cluster.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "support/wait.h"

namespace hookrelay::testing {
namespace {

constexpr char kInstallHint[] =
    "PostgreSQL is needed by the PostgreSQL store's tests: run scripts/install-deps (it installs "
    "Debian's postgresql package)";

// A port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string Tail(const std::string& text, size_t n = 2000) {
  return text.size() <= n ? text : "…" + text.substr(text.size() - n);
}

}  // namespace

std::string PgCluster::FindBinDir() {
  std::error_code ec;
  const std::filesystem::path root("/usr/lib/postgresql");
  int best = -1;
  std::string best_dir;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    int version = 0;
    try {
      version = std::stoi(name);
    } catch (...) {
      continue;
    }
    const std::filesystem::path bin = entry.path() / "bin";
    if (version > best && std::filesystem::exists(bin / "initdb", ec) &&
        std::filesystem::exists(bin / "pg_ctl", ec)) {
      best = version;
      best_dir = bin.string();
    }
  }
  return best_dir;
}

RunResult PgCluster::RunAsOwner(std::vector<std::string> argv,
                                std::chrono::milliseconds timeout) const {
  if (as_postgres_) {
    argv.insert(argv.begin(), {"/usr/sbin/runuser", "-u", "postgres", "--"});
  }
  return RunProgram(argv, {}, timeout, {{"LC_ALL", "C"}});
}

std::string PgCluster::Prepare() {
  bin_dir_ = FindBinDir();
  if (bin_dir_.empty()) {
    return std::string("no PostgreSQL server found (no /usr/lib/postgresql/*/bin/initdb). ") +
           kInstallHint;
  }
  as_postgres_ = geteuid() == 0;
  if (as_postgres_) {
    // initdb and postgres refuse to run as root: the directory belongs to `postgres` instead.
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr) {
      return std::string(
                 "running as root, and there is no `postgres` user to run the server "
                 "as. ") +
             kInstallHint;
    }
    if (chown(dir_.path().c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return "cannot give " + dir_.path() + " to the postgres user: " + strerror(errno);
    }
  }
  data_dir_ = dir_.path() + "/data";
  socket_dir_ = dir_.path();
  log_path_ = dir_.path() + "/postgres.log";
  return "";
}

std::string PgCluster::StartServer(const Options& options) {
  // A port that was free may be taken before the server binds it: try a few.
  std::string last;
  for (int tries = 0; tries < 5 && !running_; ++tries) {
    port_ = FreePort();
    server_options_ = "-p " + std::to_string(port_) + " -k " + socket_dir_ +
                      " -c listen_addresses=127.0.0.1 -c max_connections=200";
    if (!options.fsync) server_options_ += " -c fsync=off -c full_page_writes=off";
    last = StartAgain();
  }
  return running_ ? "" : last;
}

std::unique_ptr<PgCluster> PgCluster::Start(const Options& options, std::string* error) {
  std::unique_ptr<PgCluster> c(new PgCluster());
  if (std::string st = c->Prepare(); !st.empty()) {
    *error = st;
    return nullptr;
  }
  // initdb costs about 1.5 s, and ctest runs each test in a process of its own: the first
  // cluster of this user and major version is made into a template directory beside the
  // temporary ones, which later clusters copy (cp -a, a tenth of that).
  std::string template_dir;
  if (std::string st = c->EnsureTemplate(&template_dir); !st.empty()) {
    *error = st;
    return nullptr;
  }
  RunResult copy =
      RunProgram({"/bin/cp", "-a", template_dir, c->data_dir_}, {}, std::chrono::seconds(120));
  if (copy.exit_code != 0) {
    *error = "cannot copy the cluster template " + template_dir + ": " + Tail(copy.err);
    return nullptr;
  }
  if (std::string st = c->StartServer(options); !st.empty()) {
    *error = st;
    return nullptr;
  }
  return c;
}

std::unique_ptr<PgCluster> PgCluster::StartStandby(const PgCluster& primary, const Options& options,
                                                   std::string* error) {
  std::unique_ptr<PgCluster> c(new PgCluster());
  if (std::string st = c->Prepare(); !st.empty()) {
    *error = st;
    return nullptr;
  }
  // The template's pg_hba.conf lets 127.0.0.1 replicate (initdb's defaults, trust). -R writes
  // primary_conninfo and standby.signal; -X stream copies the WAL written meanwhile.
  RunResult backup = c->RunAsOwner({c->bin_dir_ + "/pg_basebackup", "-D", c->data_dir_, "-h",
                                    "127.0.0.1", "-p", std::to_string(primary.port()), "-U",
                                    "postgres", "-R", "-X", "stream", "-c", "fast", "--no-sync"},
                                   std::chrono::seconds(120));
  if (backup.exit_code != 0) {
    *error = "pg_basebackup failed (exit " + std::to_string(backup.exit_code) +
             "): " + Tail(backup.out + backup.err);
    return nullptr;
  }
  if (std::string st = c->StartServer(options); !st.empty()) {
    *error = st;
    return nullptr;
  }
  return c;
}

std::string PgCluster::StartAgain() {
  RunResult start = RunAsOwner({bin_dir_ + "/pg_ctl", "start", "-w", "-t", "60", "-D", data_dir_,
                                "-l", log_path_, "-o", server_options_},
                               std::chrono::seconds(90));
  if (start.exit_code != 0) {
    return "pg_ctl start failed (exit " + std::to_string(start.exit_code) +
           "): " + Tail(start.out + start.err) + "\nserver log: " + Tail(ReadFile(log_path_));
  }
  running_ = true;
  return "";
}

std::string PgCluster::Restart() {
  // restart takes the options of the last start from postmaster.opts (same port and socket).
  RunResult r = RunAsOwner({bin_dir_ + "/pg_ctl", "restart", "-w", "-t", "60", "-m", "fast", "-D",
                            data_dir_, "-l", log_path_},
                           std::chrono::seconds(90));
  if (r.exit_code != 0) {
    return "pg_ctl restart failed (exit " + std::to_string(r.exit_code) +
           "): " + Tail(r.out + r.err) + "\nserver log: " + Tail(ReadFile(log_path_));
  }
  return "";
}

std::string PgCluster::Stop(const std::string& mode) {
  RunResult r =
      RunAsOwner({bin_dir_ + "/pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", data_dir_},
                 std::chrono::seconds(90));
  if (r.exit_code != 0) {
    return "pg_ctl stop -m " + mode + " failed (exit " + std::to_string(r.exit_code) +
           "): " + Tail(r.out + r.err);
  }
  running_ = false;
  return "";
}

std::string PgCluster::Promote() {
  RunResult r = RunAsOwner({bin_dir_ + "/pg_ctl", "promote", "-w", "-t", "60", "-D", data_dir_},
                           std::chrono::seconds(90));
  if (r.exit_code != 0) {
    return "pg_ctl promote failed (exit " + std::to_string(r.exit_code) +
           "): " + Tail(r.out + r.err) + "\nserver log: " + Tail(ReadFile(log_path_));
  }
  return "";
}

std::string PgCluster::MakeStandbySynchronous() {
  if (std::string err = Exec("postgres", "ALTER SYSTEM SET synchronous_standby_names = '*'");
      !err.empty()) {
    return "ALTER SYSTEM: " + err;
  }
  if (std::string err = Exec("postgres", "SELECT pg_reload_conf()"); !err.empty()) {
    return "pg_reload_conf: " + err;
  }
  std::string last;
  const bool synchronous = test::WaitFor(
      [&] {
        std::vector<std::vector<std::string>> rows;
        last = Query("postgres", "SELECT sync_state FROM pg_stat_replication", &rows);
        if (!last.empty()) return false;
        for (const auto& row : rows) {
          if (!row.empty() && row[0] == "sync") return true;
        }
        last = "no synchronous standby in pg_stat_replication (" + std::to_string(rows.size()) +
               " standby(s))";
        return false;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(20));
  if (synchronous) return "";
  return last;
}

std::string PgCluster::EnsureTemplate(std::string* dir) const {
  const std::string major = std::filesystem::path(bin_dir_).parent_path().filename().string();
  const std::filesystem::path tmp = std::filesystem::temp_directory_path();
  // "-1": the initdb options below; change it with them.
  *dir = (tmp / ("hookrelay-pg-template-" + major + "-1-u" + std::to_string(geteuid()))).string();
  std::error_code ec;
  auto whole = [&] {
    for (const char* f :
         {"/PG_VERSION", "/global/pg_control", "/postgresql.conf", "/pg_hba.conf"}) {
      if (!std::filesystem::exists(*dir + f, ec)) return false;
    }
    return true;
  };
  if (whole()) return "";
  // A template with files missing (a cleaner of old temporary files went through it): made anew.
  std::filesystem::remove_all(*dir, ec);
  // initdb into a directory of our own, then rename it into place: a concurrent test process
  // doing the same either wins the rename or finds the template there and drops its own.
  std::string parent = (tmp / "hookrelay-pg-initdb-XXXXXX").string();
  if (mkdtemp(parent.data()) == nullptr) return "mkdtemp: " + std::string(strerror(errno));
  if (as_postgres_) {
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr || chown(parent.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      std::filesystem::remove_all(parent, ec);
      return "cannot give " + parent + " to the postgres user";
    }
  }
  const std::string data = parent + "/data";
  RunResult init = RunAsOwner(
      {bin_dir_ + "/initdb", "-D", data, "-U", "postgres", "--auth-local=trust",
       "--auth-host=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"},
      std::chrono::seconds(120));
  std::string result;
  if (init.exit_code != 0) {
    result = "initdb failed (exit " + std::to_string(init.exit_code) + "): " + Tail(init.err);
  } else if (rename(data.c_str(), dir->c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST) {
    result = "cannot move the cluster template to " + *dir + ": " + strerror(errno);
  }
  std::filesystem::remove_all(parent, ec);
  return result;
}

PgCluster::~PgCluster() {
  if (running_) {
    RunResult stop =
        RunAsOwner({bin_dir_ + "/pg_ctl", "stop", "-w", "-t", "60", "-m", "fast", "-D", data_dir_},
                   std::chrono::seconds(90));
    if (stop.exit_code != 0) {
      ADD_FAILURE() << "pg_ctl stop failed: " << Tail(stop.out + stop.err);
    }
  }
  // dir_ (data, socket, log) is removed by its destructor.
}

std::string PgCluster::Url(const std::string& db) const {
  return "postgres://postgres@127.0.0.1:" + std::to_string(port_) + "/" + db;
}

std::string PgCluster::Exec(const std::string& db, const std::string& sql) {
  std::vector<std::vector<std::string>> ignored;
  return Query(db, sql, &ignored);
}

std::string PgCluster::Query(const std::string& db, const std::string& sql,
                             std::vector<std::vector<std::string>>* rows) {
  rows->clear();
  PGconn* conn = PQconnectdb(Url(db).c_str());
  std::string err;
  if (PQstatus(conn) != CONNECTION_OK) {
    err = std::string("cannot connect: ") + PQerrorMessage(conn);
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      err = PQresultErrorMessage(r);
      if (err.empty()) err = "failed";
    } else {
      for (int i = 0; i < PQntuples(r); ++i) {
        std::vector<std::string>& row = rows->emplace_back();
        for (int j = 0; j < PQnfields(r); ++j) {
          row.emplace_back(PQgetvalue(r, i, j), static_cast<size_t>(PQgetlength(r, i, j)));
        }
      }
    }
    PQclear(r);
  }
  PQfinish(conn);
  return err;
}

std::string PgCluster::CreateDatabase(std::string* error) {
  const std::string name =
      "t" + std::to_string(getpid()) + "_" + std::to_string(next_db_.fetch_add(1));
  const std::string err = Exec("postgres", "CREATE DATABASE " + name);
  if (!err.empty()) {
    *error = "CREATE DATABASE " + name + ": " + err;
    return "";
  }
  return Url(name);
}

namespace {

std::mutex g_mu;
std::unique_ptr<PgCluster> g_cluster;  // guarded by g_mu
std::string g_error;                   // why it could not start; guarded by g_mu
bool g_tried = false;                  // guarded by g_mu

class PgEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard<std::mutex> lock(g_mu);
    g_cluster.reset();
  }
};

// Registered when this file is linked in (a test binary that calls SharedPgCluster).
[[maybe_unused]] ::testing::Environment* const g_environment =
    ::testing::AddGlobalTestEnvironment(new PgEnvironment);

}  // namespace

PgCluster* SharedPgCluster(std::string* error) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_tried) {
    g_tried = true;
    g_cluster = PgCluster::Start({}, &g_error);
  }
  if (!g_cluster) *error = g_error;
  return g_cluster.get();
}

}  // namespace hookrelay::testing
