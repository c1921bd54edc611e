#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <string>
#include <string_view>

#include "common/result.h"
#include "http/request.h"

// A small blocking client of the management API (/api/v1) for the CLI, on libcurl's easy
// interface. Not thread-safe; one per command.

namespace hookrelay::cli {

inline constexpr const char* kDefaultApiUrl = "http://127.0.0.1:8080";

// Where the API is and how to authenticate. The token is a secret: it is sent only in the
// Authorization header and never appears in a message or in output.
struct ApiConfig {
  std::string url;  // "http://127.0.0.1:8080", without a trailing slash
  std::string token;
  // Added to the message when the server cannot be reached ("" for none).
  std::string unreachable_hint = "is `hookrelay serve` running? set --server or HOOKRELAY_URL";
};

// --server, else HOOKRELAY_URL, else kDefaultApiUrl; --token, else HOOKRELAY_TOKEN, else
// HOOKRELAY_ADMIN_TOKEN (the name `hookrelay serve` reads), else empty. Empty values count as
// absent.
ApiConfig ResolveApiConfig(const std::string& server_flag, const std::string& token_flag);

// The API address must be only a scheme and an authority: "http://127.0.0.1:8080" (a trailing
// "/" is fine). A path, a query or a fragment means a destination's URL was given in its place,
// and the admin token would go to that server: kInvalidArgument, saying that --server is the
// API's address and --url the destination's. `from` names where the address came from
// ("--server" or "HOOKRELAY_URL"). Pure.
Status CheckApiAddress(std::string_view url, std::string_view from);

// kInvalidArgument saying which variable or flag to set when `token` is empty, or that it holds a
// control character (a CR or LF would inject a header). Pure.
Status CheckToken(std::string_view token);

// Percent-encodes everything but RFC 3986 unreserved characters, for a path segment or a query
// value (the server's http::PercentEncode).
using http::PercentEncode;

// The API's answer as a result: a 2xx JSON body is the value; any other status becomes an error
// whose message is the API's own ("HTTP 401 unauthenticated: missing or wrong bearer token",
// with " (field: x)" when the error names a field); a body that is not JSON is an error that
// quotes the start of it. Pure; `url` is only used in messages.
Result<boost::json::value> InterpretResponse(long status, std::string_view body,
                                             std::string_view url);

class ApiClient {
 public:
  explicit ApiClient(ApiConfig config,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30));

  const ApiConfig& config() const { return config_; }

  // `path` starts with "/api/v1/…" and may carry a query. Transport failures are kUnavailable
  // with a message naming the URL and libcurl's reason; API errors as in InterpretResponse.
  Result<boost::json::value> Get(std::string_view path);
  Result<boost::json::value> Post(std::string_view path, const boost::json::value& body);
  Result<boost::json::value> Patch(std::string_view path, const boost::json::value& body);
  Result<boost::json::value> Delete(std::string_view path);

 private:
  Result<boost::json::value> Perform(const char* method, std::string_view path,
                                     const std::string* body);

  ApiConfig config_;
  std::chrono::milliseconds timeout_;
};

}  // namespace hookrelay::cli
