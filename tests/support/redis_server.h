#pragma once

// A private Redis server for tests: Debian's redis-server on a free port of 127.0.0.1, its data
// in a fresh temporary directory, in the foreground (`--daemonize no`), never the system service.
// Entries are made durable before XADD answers (`--appendonly yes --appendfsync always`), so a
// test that kills the server can count on every acknowledged entry after Start(). Stopped (and
// its directory removed) at destruction.
//
// A missing redis-server is a failure with the fix (scripts/install-deps), never a skip: the Redis
// kind's tests are the only proof it works.

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "support/process.h"

namespace hookrelay::testing {

// One reply, as the tests read it (hiredis's redisReply, copied).
struct RedisValue {
  enum class Type { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus, kError
  long long integer = 0;
  std::vector<RedisValue> elements;  // kArray
  bool error() const { return type == Type::kError; }
};

// One stream entry (XRANGE), its fields in order.
struct StreamEntry {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;
  // The value of the first field named `name`; "" when there is none.
  std::string Field(const std::string& name) const;
  bool Has(const std::string& name) const;
};

class RedisServer {
 public:
  struct Options {
    std::string password;  // non-empty: requirepass
  };
  RedisServer() : RedisServer(Options{}) {}
  explicit RedisServer(Options options);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // The server answered PING after the last Start (the constructor's included); else error().
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  // redis://[:password@]127.0.0.1:<port>/<db>
  std::string Url(int db = 0) const;

  // Stops the server with `sig` (SIGTERM: a clean shutdown; SIGKILL: a crash) and waits for it to
  // exit; "" when it did, else why not.
  std::string Stop(int sig = SIGTERM);
  // Starts it again on the same port and directory (after Stop) and waits for PING; "" when it
  // answers, else the error (also kept in error()).
  std::string Start();

  // Runs one command on a fresh connection to database `db` (authenticated when there is a
  // password). A connection that fails gives a kError value saying so.
  RedisValue Command(const std::vector<std::string>& args, int db = 0) const;
  // XRANGE <stream> - + in database `db` as entries; empty when the stream does not exist.
  std::vector<StreamEntry> Entries(const std::string& stream, int db = 0) const;
  // The server's log so far.
  std::string Log() const;

 private:
  std::string Launch();

  Options options_;
  TempDir dir_;
  int port_ = 0;
  std::string error_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace hookrelay::testing
