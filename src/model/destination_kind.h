#pragma once

// A destination's kind ("kind"): which transport carries its deliveries, and that kind's own
// settings. "http" (the default) POSTs to an HTTP endpoint; "redis" appends each delivery to a
// Redis stream (XADD). The kind's settings live in their own struct on model::Destination, set
// exactly when the destination is of that kind, so a kind that comes next (amqp, nats) adds its
// name here, its struct, its fields to KindOfField, and its branch to ParseKindSettings.
//
// The delivery side picks a sender by the same name (delivery/kinds/registry.cc); the two lists
// are kept equal by delivery's kind_registry_test.

#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hookrelay::model {

inline constexpr std::string_view kHttpKind = "http";
inline constexpr std::string_view kRedisKind = "redis";

// Every kind a destination may have, in the order the docs list them.
std::span<const std::string_view> DestinationKindNames();

// Kind "redis": each delivery is one `XADD <stream> [MAXLEN ~ <maxlen>] * field value …`
// (docs/delivery.md, "Redis Streams").
struct RedisSettings {
  std::string stream;             // the stream's key: required, not empty
  std::optional<int64_t> maxlen;  // approximate trimming (MAXLEN ~); > 0 when set
  bool operator==(const RedisSettings&) const = default;
};

// Where a redis:// URL points.
struct RedisEndpoint {
  std::string host;      // a name or an address literal, without IPv6 brackets
  int port = 6379;       // the URL's, else Redis's default
  std::string username;  // ACL user; "" with a password: AUTH <password> (requirepass)
  std::string password;  // "" : no AUTH
  int db = 0;            // the path's number ("/3"); 0 when there is none
};

// Parses `redis://[[username]:password@]host[:port][/db]` (user-info percent-decoded). Errors are
// kInvalidArgument naming "url" and never quote the user-info. "rediss://" (TLS) is refused,
// saying why: Debian 12's hiredis (0.14) has no TLS.
Result<RedisEndpoint> ParseRedisUrl(std::string_view url);

// The kind a field belongs to when it is not common to every kind ("stream" → "redis"); "" for a
// common field (name, url, policy, headers, …).
std::string_view KindOfField(std::string_view field);

// Checks `o`'s fields against `kind`: a field of another kind is an error naming it ("stream:
// only for kind redis"), and so are the common fields that `kind` cannot honour (for redis:
// "tls", which hiredis 0.14 cannot do, and "auth", whose credentials go in the URL).
Status CheckKindFields(const boost::json::object& o, std::string_view kind);

// The "redis" settings from a destination object ("stream", "maxlen"); errors name the field.
Result<RedisSettings> ParseRedisSettings(const boost::json::object& o);

}  // namespace hookrelay::model
