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

std::unique_ptr<PgCluster> PgCluster::Start(const Options& options, std::string* error) {
  std::unique_ptr<PgCluster> c(new PgCluster());
  c->bin_dir_ = FindBinDir();
  if (c->bin_dir_.empty()) {
    *error = std::string("no PostgreSQL server found (no /usr/lib/postgresql/*/bin/initdb). ") +
             kInstallHint;
    return nullptr;
  }
  c->as_postgres_ = geteuid() == 0;
  if (c->as_postgres_) {
    // initdb and postgres refuse to run as root: the directory belongs to `postgres` instead.
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr) {
      *error = std::string(
                   "running as root, and there is no `postgres` user to run the server "
                   "as. ") +
               kInstallHint;
      return nullptr;
    }
    if (chown(c->dir_.path().c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      *error = "cannot give " + c->dir_.path() + " to the postgres user: " + strerror(errno);
      return nullptr;
    }
  }
  c->data_dir_ = c->dir_.path() + "/data";
  c->socket_dir_ = c->dir_.path();
  c->log_path_ = c->dir_.path() + "/postgres.log";

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
  // A port that was free may be taken before the server binds it: try a few.
  std::string last;
  for (int tries = 0; tries < 5 && !c->running_; ++tries) {
    c->port_ = FreePort();
    std::string server_options = "-p " + std::to_string(c->port_) + " -k " + c->socket_dir_ +
                                 " -c listen_addresses=127.0.0.1 -c max_connections=200";
    if (!options.fsync) server_options += " -c fsync=off -c full_page_writes=off";
    RunResult start = c->RunAsOwner({c->bin_dir_ + "/pg_ctl", "start", "-w", "-t", "60", "-D",
                                     c->data_dir_, "-l", c->log_path_, "-o", server_options},
                                    std::chrono::seconds(90));
    if (start.exit_code == 0) {
      c->running_ = true;
    } else {
      last = "pg_ctl start failed (exit " + std::to_string(start.exit_code) +
             "): " + Tail(start.out + start.err) + "\nserver log: " + Tail(ReadFile(c->log_path_));
    }
  }
  if (!c->running_) {
    *error = last;
    return nullptr;
  }
  return c;
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
