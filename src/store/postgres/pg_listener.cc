#include "store/postgres/pg_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include "common/thread_name.h"
#include "store/postgres/pg_conn.h"

namespace hookrelay::store::pg {

namespace {

std::string QuoteIdent(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

bool Contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

}  // namespace

std::string PublicFailureReason(std::string_view d) {
  // libpq's and the server's wording (PostgreSQL 15, English messages); the first match wins.
  if (Contains(d, "Connection refused")) return "PostgreSQL is unreachable (connection refused)";
  if (Contains(d, "timeout expired") || Contains(d, "timed out")) {
    return "PostgreSQL is unreachable (the connection timed out)";
  }
  if (Contains(d, "could not translate host name") || Contains(d, "Name or service not known")) {
    return "PostgreSQL is unreachable (its host name does not resolve)";
  }
  if (Contains(d, "No route to host") || Contains(d, "Network is unreachable")) {
    return "PostgreSQL is unreachable (no route to the server)";
  }
  if (Contains(d, "authentication failed") || Contains(d, "no password supplied") ||
      Contains(d, "no pg_hba.conf entry")) {
    return "PostgreSQL refused the connection (authentication)";
  }
  if (Contains(d, "database") && Contains(d, "does not exist")) {
    return "PostgreSQL refused the connection (no such database)";
  }
  if (Contains(d, "too many clients") || Contains(d, "remaining connection slots")) {
    return "PostgreSQL has no free connection slot";
  }
  if (Contains(d, "starting up") || Contains(d, "shutting down") ||
      Contains(d, "terminating connection") || Contains(d, "in recovery mode")) {
    return "PostgreSQL is restarting, shutting down or recovering";
  }
  if (Contains(d, "read-only") || Contains(d, "target_session_attrs") ||
      Contains(d, "not accept writes")) {
    return "PostgreSQL is read-only (a standby; no primary found)";
  }
  if (Contains(d, "connection lost") || Contains(d, "server closed the connection") ||
      Contains(d, "no connection to the server") || Contains(d, "could not receive data")) {
    return "the connection to PostgreSQL was lost";
  }
  if (Contains(d, "could not connect") || Contains(d, "cannot connect")) {
    return "PostgreSQL is unreachable";
  }
  return "PostgreSQL does not answer";
}

PgListener::PgListener(Options options, Callback callback)
    : options_(std::move(options)), callback_(std::move(callback)) {
  if (::pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    stop_pipe_[0] = stop_pipe_[1] = -1;  // Stop is then noticed within a ping interval
  }
  thread_ = std::thread(&PgListener::Loop, this);
}

PgListener::~PgListener() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  if (stop_pipe_[1] >= 0) {
    const char c = 0;
    (void)!::write(stop_pipe_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int fd : stop_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

std::optional<Status> PgListener::Down() const {
  MutexLock lock(mu_);
  return down_;
}

int64_t PgListener::connections() const {
  MutexLock lock(mu_);
  return connections_;
}

bool PgListener::Stopping() const {
  MutexLock lock(mu_);
  return stopping_;
}

bool PgListener::WaitOrStop(Duration d) {
  const auto deadline = std::chrono::steady_clock::now() + d;
  for (;;) {
    if (Stopping()) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{stop_pipe_[0], POLLIN, 0};
    // Without the pipe, wake every 100 ms to see Stop.
    ::poll(
        &p, stop_pipe_[0] >= 0 ? 1 : 0,
        static_cast<int>(stop_pipe_[0] >= 0 ? left.count() : std::min<int64_t>(left.count(), 100)));
  }
}

void PgListener::Loop() {
  NameThisThread("hr-pg-listen");
  constexpr Duration kFirstBackoff = std::chrono::milliseconds(100);
  Duration backoff = kFirstBackoff;
  bool logged_down = false;
  while (!Stopping()) {
    Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(options_.url, options_.display);
    Status st = conn.status();
    if (conn.ok()) {
      for (const std::string& channel : options_.channels) {
        st = (*conn)->Script("LISTEN " + QuoteIdent(channel), "listen for other nodes' changes");
        if (!st.ok()) break;
      }
    }
    if (!st.ok()) {
      {
        MutexLock lock(mu_);
        down_ = st;
      }
      if (!logged_down) {
        spdlog::warn("PostgreSQL store: cannot listen for other nodes' changes: {} (retrying)",
                     st.message());
        logged_down = true;
      }
      if (WaitOrStop(backoff)) return;
      backoff = std::min(backoff * 2, options_.max_backoff);
      continue;
    }
    backoff = kFirstBackoff;
    int64_t n = 0;
    {
      MutexLock lock(mu_);
      down_.reset();
      n = ++connections_;
    }
    if (logged_down || n > 1) {
      spdlog::info("PostgreSQL store: listening for other nodes' changes again");
    }
    logged_down = false;
    // What was sent while this connection was not listening is lost: everything may have changed.
    callback_("");
    st = Serve(**conn);
    if (Stopping()) return;
    {
      MutexLock lock(mu_);
      down_ = st;
    }
    spdlog::warn(
        "PostgreSQL store: lost the connection listening for other nodes' changes: {} "
        "(reconnecting)",
        st.message());
    logged_down = true;
  }
}

Status PgListener::Serve(PgConn& conn) {
  const int ping_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.ping_every).count());
  for (;;) {
    pollfd fds[2] = {{conn.socket(), POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    const int nfds = stop_pipe_[0] >= 0 ? 2 : 1;
    const int ready = ::poll(fds, nfds, ping_ms);
    if (Stopping()) return Status::Ok();
    if (ready < 0 && errno != EINTR) {
      return Status::Unavailable(std::string("poll failed: ") + std::strerror(errno));
    }
    if (ready == 0) {
      // Silence: make sure the server is still there (a notification read meanwhile is kept).
      HR_RETURN_IF_ERROR(conn.Exec("SELECT 1", "ping").status());
    } else if (ready > 0) {
      HR_RETURN_IF_ERROR(conn.ConsumeInput());
    }
    std::set<std::string> channels;
    for (PgConn::Notification& n : conn.TakeNotifications()) {
      if (!options_.own_payload.empty() && n.payload == options_.own_payload) continue;
      channels.insert(std::move(n.channel));
    }
    for (const std::string& channel : channels) callback_(channel);
  }
}

}  // namespace hookrelay::store::pg
