// Fuzzes signature verification with attacker-controlled headers and body, under every scheme.
// It must never crash, and a rejection must be Unauthenticated with a reason that does not
// contain a secret.
//
// Input, text so seeds are readable:
//   @secret: S          (repeatable; the configured secrets, in order)
//   @now: 1700000000    (server time, Unix seconds; clamped to 1970..2100)
//   @tolerance: 5m      (timestamp schemes)
//   @header: X-Sig      (hmac scheme: header, algorithm, encoding, prefix)
//   @algorithm: sha256
//   @encoding: hex
//   @prefix: sha256=
//   Name: value         (request headers; names match case-insensitively, the first one wins)
//   <empty line>
//   body bytes
// Each input is verified with github, stripe, shopify, standard and hmac.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/units.h"
#include "ingest/verify.h"
#include "model/source.h"

namespace {

using hookrelay::model::VerifyConfig;
using hookrelay::model::VerifyScheme;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Fixed reason texts are printable ASCII, and the only fuzzed text a reason may show is the
// configured header name ("missing X-Sig header"). So once that is removed, a secret with another
// byte in it can only be in a reason by leaking.
bool Distinctive(const std::string& secret) {
  if (secret.size() < 8) return false;
  return std::any_of(secret.begin(), secret.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return u < 0x20 || u >= 0x7f;
  });
}

std::string WithoutHeaderName(std::string message, const std::string& header) {
  if (header.empty()) return message;
  for (size_t at = message.find(header); at != std::string::npos; at = message.find(header)) {
    message.erase(at, header.size());
  }
  return message;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  VerifyConfig config;
  config.header = "X-Signature";
  int64_t now_s = 1'700'000'000;
  std::map<std::string, std::string> headers;

  while (!rest.empty()) {
    const size_t cut = rest.find('\n');
    const std::string_view line = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
    if (Trim(line).empty()) break;  // the body follows
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    if (name == "@secret") {
      config.secrets.emplace_back(value);
    } else if (name == "@now") {
      int64_t v = 0;
      std::from_chars(value.data(), value.data() + value.size(), v);
      now_s = std::clamp<int64_t>(v, 0, 4'102'444'800);
    } else if (name == "@tolerance") {
      hookrelay::Result<hookrelay::Duration> d = hookrelay::ParseDuration(value);
      if (d.ok()) config.tolerance = *d;
    } else if (name == "@header") {
      config.header = std::string(value);
    } else if (name == "@algorithm") {
      config.algorithm = std::string(value);
    } else if (name == "@encoding") {
      config.encoding = std::string(value);
    } else if (name == "@prefix") {
      config.prefix = std::string(value);
    } else {
      headers.emplace(Lower(name), std::string(value));
    }
  }
  const std::string_view body = rest;
  const hookrelay::ingest::HeaderLookup lookup =
      [&headers](std::string_view name) -> std::optional<std::string_view> {
    auto it = headers.find(Lower(name));
    if (it == headers.end()) return std::nullopt;
    return std::string_view(it->second);
  };
  const hookrelay::TimePoint now = hookrelay::FromUnixMillis(now_s * 1000);

  for (VerifyScheme scheme : {VerifyScheme::kGithub, VerifyScheme::kStripe, VerifyScheme::kShopify,
                              VerifyScheme::kStandard, VerifyScheme::kHmac}) {
    config.scheme = scheme;
    const hookrelay::Status st = hookrelay::ingest::VerifySignature(config, lookup, body, now);
    if (st.ok()) continue;
    const std::string scheme_name(hookrelay::model::VerifySchemeName(scheme));
    if (st.code() != hookrelay::Status::Code::kUnauthenticated) {
      std::fprintf(stderr, "verify_fuzzer: %s: rejected with %s\n", scheme_name.c_str(),
                   st.ToString().c_str());
      std::abort();
    }
    const std::string reason = WithoutHeaderName(st.message(), config.header);
    for (const std::string& secret : config.secrets) {
      if (Distinctive(secret) && reason.find(secret) != std::string::npos) {
        std::fprintf(stderr, "verify_fuzzer: %s: the reason contains a secret: %s\n",
                     scheme_name.c_str(), st.message().c_str());
        std::abort();
      }
    }
  }
  return 0;
}
