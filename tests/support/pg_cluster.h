#pragma once

// A private PostgreSQL cluster for tests: initdb (made once, then copied) into a fresh temporary
// directory, a free port on
// 127.0.0.1 (and a unix socket inside the directory), trust authentication for local and
// 127.0.0.1 connections only, started with `pg_ctl start -w`, stopped with `pg_ctl stop -m fast`
// and removed at the end. No system service, no password prompt, nothing on the PATH needed: the
// binaries are found in /usr/lib/postgresql/<highest version>/bin (Debian's layout).
//
// initdb and postgres refuse to run as root (CI runs as root): then they run as the `postgres`
// system user that Debian's package creates (`runuser -u postgres --`), which owns the directory.
//
// One cluster per test binary: SharedPgCluster() starts it on first use and a gtest Environment
// stops it when the binary ends; each test asks it for a fresh database (CreateDatabase).

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "support/process.h"

namespace hookrelay::testing {

class PgCluster {
 public:
  struct Options {
    // fsync off: the tests' clusters die with their directory, and a commit's fsync would be most
    // of a small test's time. (Durability is PostgreSQL's own, not under test here.)
    bool fsync = false;
  };

  // Starts a cluster; nullptr with *error set (naming scripts/install-deps when PostgreSQL is
  // missing) when it cannot.
  static std::unique_ptr<PgCluster> Start(const Options& options, std::string* error);
  // Starts a streaming standby of `primary` (pg_basebackup -R -X stream into a directory of its
  // own, then started on a free port of its own; hot standby: read-only queries work). It is
  // asynchronous until the primary names it: see MakeStandbySynchronous.
  static std::unique_ptr<PgCluster> StartStandby(const PgCluster& primary, const Options& options,
                                                 std::string* error);
  // Stops the server (pg_ctl stop -m fast) and removes the directory.
  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  // A new, empty database; its postgres:// URL (TCP to 127.0.0.1). "" with *error set on failure.
  std::string CreateDatabase(std::string* error);
  // The URL of database `db` in this cluster.
  std::string Url(const std::string& db) const;
  int port() const { return port_; }
  const std::string& bin_dir() const { return bin_dir_; }
  const std::string& data_dir() const { return data_dir_; }
  // Runs SQL on database `db` through libpq (as the superuser); "" when it succeeded, else the
  // error.
  std::string Exec(const std::string& db, const std::string& sql);

  // Runs a query on database `db`; each row's columns as text (NULL as ""). "" when it succeeded,
  // else the error.
  std::string Query(const std::string& db, const std::string& sql,
                    std::vector<std::vector<std::string>>* rows);

  // The server's life, for tests of what hookrelay does when PostgreSQL goes away. Each returns
  // "" when it succeeded, else pg_ctl's output and the server log's tail.
  // `pg_ctl restart -m fast`: sessions are ended, the server stops and starts again on the same
  // port.
  std::string Restart();
  // `pg_ctl stop -m <mode>` ("fast", or "immediate": a crash, recovered at the next start).
  std::string Stop(const std::string& mode = "fast");
  // `pg_ctl start` after Stop, on the same port.
  std::string StartAgain();
  // `pg_ctl promote`: a standby becomes a primary (read-write), waiting until it is.
  std::string Promote();
  // On a primary: synchronous_standby_names = '*' (COMMIT waits until a standby has flushed the
  // WAL), then waits until a standby reports as synchronous.
  std::string MakeStandbySynchronous();

  // The directory of the highest PostgreSQL version's binaries ("" when none is installed).
  static std::string FindBinDir();

 private:
  PgCluster() = default;
  // Prepares dir_ (owner, paths) and finds the binaries; "" or the error.
  std::string Prepare();
  // pg_ctl start on a free port (a few tries); "" or the error.
  std::string StartServer(const Options& options);
  // The directory of a freshly initdb'd cluster to copy (made on first use, kept in the temporary
  // directory for later test binaries: hookrelay-pg-template-<major>-1-u<uid>); "" or the error.
  std::string EnsureTemplate(std::string* dir) const;
  // argv run as the cluster's OS user (prefixed with runuser when this process is root).
  RunResult RunAsOwner(std::vector<std::string> argv, std::chrono::milliseconds timeout) const;

  TempDir dir_;
  std::string bin_dir_;
  std::string data_dir_;
  std::string socket_dir_;
  std::string log_path_;
  std::string server_options_;  // the postgres options pg_ctl start was given (-o)
  int port_ = 0;
  bool as_postgres_ = false;  // this process is root: the server runs as `postgres`
  bool running_ = false;
  std::atomic<int> next_db_{0};
};

// The binary's shared cluster, started on first use; stopped by a gtest Environment at the end.
// nullptr with *error set when it cannot start (a test then fails with that message).
PgCluster* SharedPgCluster(std::string* error);

}  // namespace hookrelay::testing
