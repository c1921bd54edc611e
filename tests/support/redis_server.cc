#include "support/redis_server.h"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "support/smtp_server.h"  // FreePort
#include "support/wait.h"

namespace hookrelay::testing {
namespace {

constexpr char kInstallHint[] =
    "redis-server is needed by the Redis destination kind's tests: run scripts/install-deps (it "
    "installs Debian's redis-server package)";

std::string FindRedisServer() {
  for (const char* path : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

RedisValue Copy(const redisReply& r) {
  RedisValue v;
  switch (r.type) {
    case REDIS_REPLY_STRING: v.type = RedisValue::Type::kString; break;
    case REDIS_REPLY_STATUS: v.type = RedisValue::Type::kStatus; break;
    case REDIS_REPLY_ERROR: v.type = RedisValue::Type::kError; break;
    case REDIS_REPLY_INTEGER: v.type = RedisValue::Type::kInteger; break;
    case REDIS_REPLY_ARRAY: v.type = RedisValue::Type::kArray; break;
    default: v.type = RedisValue::Type::kNil; break;
  }
  if (r.str) v.str.assign(r.str, r.len);
  v.integer = r.integer;
  for (size_t i = 0; i < r.elements; ++i) v.elements.push_back(Copy(*r.element[i]));
  return v;
}

RedisValue Error(std::string text) {
  RedisValue v;
  v.type = RedisValue::Type::kError;
  v.str = std::move(text);
  return v;
}

RedisValue Run(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data()));
  if (!reply) return Error(std::string("no reply: ") + c->errstr);
  RedisValue v = Copy(*reply);
  freeReplyObject(reply);
  return v;
}

}  // namespace

std::string StreamEntry::Field(const std::string& name) const {
  for (const auto& [k, v] : fields) {
    if (k == name) return v;
  }
  return "";
}

bool StreamEntry::Has(const std::string& name) const {
  for (const auto& kv : fields) {
    if (kv.first == name) return true;
  }
  return false;
}

RedisServer::RedisServer(Options options) : options_(std::move(options)) {
  // A port free a moment ago may be taken before the server binds it: a few tries.
  for (int i = 0; i < 3; ++i) {
    port_ = FreePort();
    error_ = Launch();
    if (error_.empty() || error_ == kInstallHint) return;
  }
}

RedisServer::~RedisServer() {
  if (process_) Stop(SIGKILL);
}

std::string RedisServer::Url(int db) const {
  std::string auth = options_.password.empty() ? "" : ":" + options_.password + "@";
  return "redis://" + auth + "127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

std::string RedisServer::Launch() {
  const std::string binary = FindRedisServer();
  if (binary.empty()) return kInstallHint;
  std::vector<std::string> argv{binary,
                                "--port",
                                std::to_string(port_),
                                "--bind",
                                "127.0.0.1",
                                "--dir",
                                dir_.path(),
                                "--daemonize",
                                "no",
                                "--save",
                                "",
                                "--appendonly",
                                "yes",
                                "--appendfsync",
                                "always",
                                "--logfile",
                                ""};
  if (!options_.password.empty()) argv.insert(argv.end(), {"--requirepass", options_.password});
  process_ = std::make_unique<ChildProcess>(argv, dir_.path());
  bool pong = test::WaitFor(
      [&] {
        if (!process_->Running()) return true;
        RedisValue v = Command({"PING"});
        return v.type == RedisValue::Type::kStatus && v.str == "PONG";
      },
      std::chrono::seconds(10), std::chrono::milliseconds(20));
  if (!pong || !process_->Running()) {
    std::string log = Log();
    process_.reset();
    return "redis-server did not answer PING on 127.0.0.1:" + std::to_string(port_) + ": " + log;
  }
  return "";
}

std::string RedisServer::Stop(int sig) {
  if (!process_) return "not running";
  process_->Signal(sig);
  const int code = process_->Wait(std::chrono::seconds(20));
  process_.reset();
  if (code == -2) return "redis-server did not exit within 20 s";
  return "";
}

std::string RedisServer::Start() {
  if (process_) return "already running";
  error_ = Launch();
  return error_;
}

RedisValue RedisServer::Command(const std::vector<std::string>& args, int db) const {
  const timeval tv{5, 0};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
  if (!c) return Error("cannot allocate a connection");
  if (c->err) {
    RedisValue v = Error(std::string("connect: ") + c->errstr);
    redisFree(c);
    return v;
  }
  redisSetTimeout(c, tv);
  if (!options_.password.empty()) {
    RedisValue auth = Run(c, {"AUTH", options_.password});
    if (auth.error()) {
      redisFree(c);
      return auth;
    }
  }
  if (db != 0) {
    RedisValue select = Run(c, {"SELECT", std::to_string(db)});
    if (select.error()) {
      redisFree(c);
      return select;
    }
  }
  RedisValue v = Run(c, args);
  redisFree(c);
  return v;
}

std::vector<StreamEntry> RedisServer::Entries(const std::string& stream, int db) const {
  std::vector<StreamEntry> out;
  RedisValue v = Command({"XRANGE", stream, "-", "+"}, db);
  for (const RedisValue& e : v.elements) {
    if (e.elements.size() != 2) continue;
    StreamEntry entry;
    entry.id = e.elements[0].str;
    const auto& kv = e.elements[1].elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2)
      entry.fields.emplace_back(kv[i].str, kv[i + 1].str);
    out.push_back(std::move(entry));
  }
  return out;
}

std::string RedisServer::Log() const {
  return process_ ? process_->Stdout() + process_->Stderr() : "";
}

}  // namespace hookrelay::testing
