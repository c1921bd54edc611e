#pragma once

// A LISTEN connection of its own, on its own thread, for the PostgreSQL store's Store::Watch:
// other nodes NOTIFY in the transactions that make new work due or change the catalog, and this
// turns their notifications into calls of a callback, at once instead of at the next poll.
//
// The connection is watched with poll(2) on its socket (and a pipe that Stop writes to), and
// pinged with `SELECT 1` after `ping_every` of silence, so a server that went away without
// closing the socket is noticed too. A lost connection is reconnected by itself, with a backoff
// from 100 ms up to `max_backoff`; after every (re)connection the callback is called once with
// channel "", since notifications sent while it was away are lost (LISTEN has no replay).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/result.h"

namespace hookrelay::store::pg {

class PgListener {
 public:
  struct Options {
    std::string url;      // may hold a password: never shown
    std::string display;  // how messages name the server
    std::vector<std::string> channels;
    // Notifications whose payload is this are this process's own, and skipped ("" skips none).
    std::string own_payload;
    Duration ping_every = std::chrono::seconds(5);
    Duration max_backoff = std::chrono::seconds(2);
  };
  // `channel` is the notification's channel; "" after a (re)connection (anything may have
  // changed). Several notifications of one channel read at once make one call.
  // Runs on the listener's thread: quick, must not block.
  using Callback = std::function<void(std::string_view channel)>;

  PgListener(Options options, Callback callback);
  // Stops the thread and closes the connection.
  ~PgListener();
  PgListener(const PgListener&) = delete;
  PgListener& operator=(const PgListener&) = delete;

  // nullopt while listening (and before its first attempt to connect); otherwise the error that
  // keeps it from listening (the detailed one, for the log: it names the server by its display
  // form).
  std::optional<Status> Down() const;
  // How many times it connected (1 after the first connection; tests wait for reconnections).
  int64_t connections() const;

 private:
  void Loop();
  // Listens on `conn` until it is lost (returns why) or Stop (returns OK).
  Status Serve(class PgConn& conn);
  // Waits up to `d` of real time or until stopped; true when stopped.
  bool WaitOrStop(Duration d);
  bool Stopping() const;

  const Options options_;
  const Callback callback_;
  int stop_pipe_[2] = {-1, -1};

  mutable Mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::optional<Status> down_ GUARDED_BY(mu_);
  int64_t connections_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

// What /readyz may say about a PostgreSQL failure: the kind of failure in a few words, without
// the server's address, user, password or database name (the endpoint is not authenticated).
// `detail` is the store's message (libpq's text included).
std::string PublicFailureReason(std::string_view detail);

}  // namespace hookrelay::store::pg
