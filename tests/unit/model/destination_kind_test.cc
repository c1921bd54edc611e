// Issue 30: a destination's kind ("http" by default, "redis") and the kind's own fields.

#include "model/destination_kind.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <string>

#include "model/destination.h"

namespace hookrelay::model {
namespace {

namespace json = boost::json;

json::object Redis(json::object extra = {}) {
  json::object o{{"name", "orders"},
                 {"kind", "redis"},
                 {"url", "redis://127.0.0.1:6379/0"},
                 {"stream", "webhooks"}};
  for (auto& kv : extra) o[kv.key()] = kv.value();
  return o;
}

Status ErrorOf(const json::object& o) {
  auto d = ParseDestination(o);
  return d.ok() ? Status::Ok() : d.status();
}

TEST(DestinationKindTest, HttpIsTheDefault) {
  auto d = ParseDestination(json::object{{"name", "d"}, {"url", "https://example.com/h"}});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->kind, "http");
  EXPECT_FALSE(d->redis);
  const json::object j = DestinationToJson(*d);
  EXPECT_EQ(j.at("kind"), "http");
  EXPECT_FALSE(j.contains("stream"));
  auto explicit_http = ParseDestination(
      json::object{{"name", "d"}, {"kind", "http"}, {"url", "https://example.com/h"}});
  ASSERT_TRUE(explicit_http.ok());
  EXPECT_EQ(explicit_http->kind, "http");
}

TEST(DestinationKindTest, RedisWithStreamAndMaxlen) {
  auto d = ParseDestination(Redis({{"maxlen", 1000}}));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->kind, "redis");
  ASSERT_TRUE(d->redis);
  EXPECT_EQ(d->redis->stream, "webhooks");
  EXPECT_EQ(d->redis->maxlen, 1000);
  const json::object j = DestinationToJson(*d);
  EXPECT_EQ(j.at("kind"), "redis");
  EXPECT_EQ(j.at("stream"), "webhooks");
  EXPECT_EQ(j.at("maxlen"), 1000);
  auto no_maxlen = ParseDestination(Redis());
  ASSERT_TRUE(no_maxlen.ok());
  EXPECT_FALSE(no_maxlen->redis->maxlen);
  EXPECT_TRUE(DestinationToJson(*no_maxlen).at("maxlen").is_null());
}

TEST(DestinationKindTest, UnknownKindIsRefusedListingTheKinds) {
  Status s = ErrorOf(Redis({{"kind", "carrier-pigeon"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "kind");
  EXPECT_NE(s.message().find("http, redis"), std::string::npos) << s.ToString();
}

TEST(DestinationKindTest, StreamIsRequiredAndNotEmpty) {
  json::object o = Redis();
  o.erase("stream");
  Status s = ErrorOf(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "stream");
  s = ErrorOf(Redis({{"stream", ""}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "stream");
  s = ErrorOf(Redis({{"stream", 3}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "stream");
}

TEST(DestinationKindTest, MaxlenMustBePositive) {
  for (json::value bad : {json::value(0), json::value(-5), json::value("100"), json::value(1.5)}) {
    Status s = ErrorOf(Redis({{"maxlen", bad}}));
    ASSERT_FALSE(s.ok()) << json::serialize(bad);
    EXPECT_EQ(s.field(), "maxlen");
  }
}

TEST(DestinationKindTest, AFieldOfAnotherKindIsRefusedNamingIt) {
  Status s =
      ErrorOf(json::object{{"name", "d"}, {"url", "https://example.com/h"}, {"stream", "x"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "stream");
  EXPECT_EQ(s.message(), "only for kind redis");
  s = ErrorOf(json::object{{"name", "d"}, {"url", "https://example.com/h"}, {"maxlen", 5}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "maxlen");
}

TEST(DestinationKindTest, TheUrlSchemeMustMatchTheKind) {
  Status s = ErrorOf(Redis({{"url", "https://example.com/h"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "url");
  EXPECT_NE(s.message().find("redis://"), std::string::npos) << s.ToString();
  s = ErrorOf(json::object{{"name", "d"}, {"url", "redis://127.0.0.1:6379/0"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "url");
  EXPECT_NE(s.message().find("http(s)"), std::string::npos) << s.ToString();
  // TLS is refused until hiredis can do it, saying so.
  s = ErrorOf(Redis({{"url", "rediss://cache.example.com:6380/0"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "url");
  EXPECT_NE(s.message().find("TLS"), std::string::npos) << s.ToString();
}

TEST(DestinationKindTest, RedisUrls) {
  auto e = ParseRedisUrl("redis://cache.example.com");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "cache.example.com");
  EXPECT_EQ(e->port, 6379);
  EXPECT_EQ(e->db, 0);
  EXPECT_EQ(e->password, "");
  e = ParseRedisUrl("redis://relay:p%40ss@[::1]:7000/3");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->port, 7000);
  EXPECT_EQ(e->db, 3);
  EXPECT_EQ(e->username, "relay");
  EXPECT_EQ(e->password, "p@ss");
  e = ParseRedisUrl("redis://:secret@127.0.0.1:6379/0");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->username, "");
  EXPECT_EQ(e->password, "secret");
  for (const char* bad : {"redis://", "redis://h:0/0", "redis://h:70000", "redis://h/x",
                          "redis://h/1/2", "redis://h/0?db=1", "redis://user@h/0", "redis:h"}) {
    auto r = ParseRedisUrl(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().field(), "url") << bad;
  }
  // An error never quotes the user-info.
  auto r = ParseRedisUrl("redis://:hunter2@h:0/0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString().find("hunter2"), std::string::npos);
}

TEST(DestinationKindTest, TheUrlsPasswordIsNeverShown) {
  auto d = ParseDestination(Redis({{"url", "redis://:hunter2-hunter2@127.0.0.1:6379/0"}}));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const std::string shown = json::serialize(DestinationToJson(*d));
  EXPECT_EQ(shown.find("hunter2"), std::string::npos) << shown;
  EXPECT_NE(shown.find("redis://***@127.0.0.1:6379/0"), std::string::npos) << shown;
  // And an echo of it in a reply is redacted, as an HTTP destination's credentials are.
  const std::vector<std::string> secrets = DestinationSecretValues(*d);
  EXPECT_NE(std::find(secrets.begin(), secrets.end(), "hunter2-hunter2"), secrets.end());
  EXPECT_EQ(RedactDestinationSecrets(*d, "auth hunter2-hunter2 failed"), "auth (redacted) failed");
}

TEST(DestinationKindTest, RedisRefusesTlsAndAuthSayingWhereCredentialsGo) {
  Status s = ErrorOf(Redis({{"auth", json::object{{"bearer", "t"}}}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "auth");
  EXPECT_NE(s.message().find("redis://user:password@host"), std::string::npos) << s.ToString();
  s = ErrorOf(Redis({{"tls", json::object{}}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.field(), "tls");
}

}  // namespace
}  // namespace hookrelay::model
