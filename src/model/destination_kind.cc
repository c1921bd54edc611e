#include "model/destination_kind.h"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <charconv>
#include <limits>

#include "model/json_fields.h"

namespace hookrelay::model {

namespace json = boost::json;

namespace {

constexpr std::string_view kKindNames[] = {kHttpKind, kRedisKind};

// Fields that belong to one kind only.
struct KindField {
  std::string_view field;
  std::string_view kind;
};
constexpr KindField kKindFields[] = {
    {"stream", kRedisKind},
    {"maxlen", kRedisKind},
};

// A Redis key may hold any bytes; a stream name over this is a mistake, not a design.
constexpr size_t kMaxStreamName = 1024;

// Reads a decimal in [min, max] spelled with digits only; false otherwise.
bool ParseNumber(std::string_view text, int min, int max, int* out) {
  if (text.empty()) return false;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return false;
  }
  *out = value;
  return true;
}

}  // namespace

std::span<const std::string_view> DestinationKindNames() { return kKindNames; }

Result<RedisEndpoint> ParseRedisUrl(std::string_view url) {
  constexpr std::string_view kShape = "must be redis://[[user]:password@]host[:port][/db]";
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return Status::InvalidArgument(std::string(kShape), "url");
  const std::string scheme(parsed->scheme());
  if (scheme == "rediss") {
    return Status::InvalidArgument(
        "rediss:// (TLS) is not supported yet: the hiredis library of Debian 12 (0.14) has no "
        "TLS; use redis:// on a trusted network, or a TLS tunnel (stunnel) on this host",
        "url");
  }
  if (scheme != "redis") {
    return Status::InvalidArgument("must be redis:// for kind redis, not " + scheme + "://", "url");
  }
  if (!parsed->has_authority() || parsed->encoded_host().empty()) {
    return Status::InvalidArgument("must name a host", "url");
  }
  if (parsed->encoded_host().size() > 253) {
    return Status::InvalidArgument("host name is longer than 253 characters", "url");
  }
  RedisEndpoint e;
  e.host = parsed->host_address();  // without the brackets of an IPv6 literal
  if (parsed->has_port() && !parsed->port().empty() &&
      !ParseNumber(parsed->port(), 1, 65535, &e.port)) {
    return Status::InvalidArgument(
        "port " + std::string(parsed->port()) + " is not a TCP port (1 to 65535)", "url");
  }
  if (parsed->has_userinfo()) {
    e.username = parsed->user();
    e.password = parsed->password();
    if (e.password.empty()) {
      return Status::InvalidArgument(
          "user-info without a password: write redis://:password@host or "
          "redis://user:password@host",
          "url");
    }
  }
  std::string_view path = parsed->encoded_path();
  if (!path.empty() && path != "/") {
    if (!ParseNumber(path.substr(1), 0, 1 << 20, &e.db) || path.substr(1).find('/') != path.npos) {
      return Status::InvalidArgument("the path must be a database number, such as /0", "url");
    }
  }
  if (parsed->has_query() || parsed->has_fragment()) {
    return Status::InvalidArgument("must have no query or fragment (" + std::string(kShape) + ")",
                                   "url");
  }
  return e;
}

std::string_view KindOfField(std::string_view field) {
  for (const KindField& f : kKindFields) {
    if (f.field == field) return f.kind;
  }
  return "";
}

Status CheckKindFields(const json::object& o, std::string_view kind) {
  for (const auto& kv : o) {
    const std::string_view owner = KindOfField(kv.key());
    if (!owner.empty() && owner != kind && !kv.value().is_null()) {
      return Status::InvalidArgument("only for kind " + std::string(owner), kv.key());
    }
  }
  if (kind == kRedisKind) {
    if (const json::value* t = o.if_contains("tls"); t && !t->is_null()) {
      return Status::InvalidArgument(
          "is not supported for kind redis yet: the hiredis library of Debian 12 (0.14) has no "
          "TLS",
          "tls");
    }
    if (const json::value* a = o.if_contains("auth"); a && !a->is_null()) {
      return Status::InvalidArgument(
          "is not for kind redis: put the credentials in the URL "
          "(redis://user:password@host; never shown or logged)",
          "auth");
    }
  }
  return Status::Ok();
}

Result<RedisSettings> ParseRedisSettings(const json::object& o) {
  RedisSettings s;
  const json::value* stream = o.if_contains("stream");
  if (!stream || stream->is_null()) {
    return Status::InvalidArgument("is required for kind redis: the stream's key", "stream");
  }
  HR_ASSIGN_OR_RETURN(s.stream, GetString(*stream, "stream"));
  if (s.stream.empty()) return Status::InvalidArgument("must not be empty", "stream");
  if (s.stream.size() > kMaxStreamName) {
    return Status::InvalidArgument("is longer than " + std::to_string(kMaxStreamName) + " bytes",
                                   "stream");
  }
  if (const json::value* m = o.if_contains("maxlen"); m && !m->is_null()) {
    HR_ASSIGN_OR_RETURN(s.maxlen, GetInt(*m, "maxlen", 1, std::numeric_limits<int64_t>::max()));
  }
  return s;
}

}  // namespace hookrelay::model
