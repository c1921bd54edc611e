#include "cli/api_client.h"

#include <curl/curl.h>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <cstdlib>
#include <memory>

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

size_t Collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// libcurl's global state, initialised once before the first handle.
void InitCurlOnce() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

std::string Snippet(std::string_view body) {
  constexpr size_t kMax = 200;
  std::string s(body.substr(0, kMax));
  if (body.size() > kMax) s += "…";
  return s;
}

}  // namespace

ApiConfig ResolveApiConfig(const std::string& server_flag, const std::string& token_flag) {
  ApiConfig c;
  c.url = !server_flag.empty() ? server_flag : Env("HOOKRELAY_URL");
  if (c.url.empty()) c.url = kDefaultApiUrl;
  while (!c.url.empty() && c.url.back() == '/') c.url.pop_back();
  c.token = !token_flag.empty() ? token_flag : Env("HOOKRELAY_TOKEN");
  if (c.token.empty()) c.token = Env("HOOKRELAY_ADMIN_TOKEN");
  return c;
}

Status CheckApiAddress(std::string_view url, std::string_view from) {
  const std::string shown = std::string(from) + " \"" + std::string(url) + "\"";
  auto u = boost::urls::parse_uri(url);  // with a fragment, unlike parse_absolute_uri
  if (!u || (u->scheme() != "http" && u->scheme() != "https") || u->host().empty()) {
    return Status::InvalidArgument(shown +
                                   " is not the API's address: expected http://HOST:PORT, "
                                   "e.g. " +
                                   std::string(kDefaultApiUrl));
  }
  if (u->has_userinfo()) {  // never echo it: it may hold a password
    return Status::InvalidArgument(std::string(from) +
                                   " carries user info (user:password@): refused; the API's "
                                   "address is http://HOST:PORT and the token goes in --token");
  }
  if ((!u->path().empty() && u->path() != "/") || u->has_query() || u->has_fragment()) {
    return Status::InvalidArgument(
        shown +
        " has a path, query or fragment, like a destination's URL: refused, so the admin token "
        "goes nowhere else. --server (or HOOKRELAY_URL) is the API's address, http://HOST:PORT; "
        "--url is a destination's URL, in `destinations add` and `destinations update`");
  }
  return Status::Ok();
}

Status CheckToken(std::string_view token) {
  for (char c : token) {  // a CR or LF would end the Authorization header and start another
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(
          "the admin token (HOOKRELAY_TOKEN or --token) contains a control character; copy it "
          "again without the line break");
    }
  }
  if (!token.empty()) return Status::Ok();
  return Status::InvalidArgument(
      "no API token: set HOOKRELAY_TOKEN (or pass --token); `hookrelay serve` prints one at "
      "its first start");
}

Result<json::value> InterpretResponse(long status, std::string_view body, std::string_view url) {
  boost::system::error_code ec;
  json::value v = body.empty() ? json::value() : json::parse(body, ec);
  if (status >= 200 && status < 300) {
    if (ec) {
      return Status::Internal("the server at " + std::string(url) +
                              " answered with something that is not JSON: " + Snippet(body));
    }
    return v;
  }
  std::string message = "HTTP " + std::to_string(status);
  const json::object* error = nullptr;
  if (!ec && v.is_object()) {
    auto it = v.get_object().find("error");
    if (it != v.get_object().end() && it->value().is_object()) error = &it->value().get_object();
  }
  if (error) {
    auto text = [&](const char* key) -> std::string {
      auto it = error->find(key);
      if (it == error->end() || !it->value().is_string()) return "";
      return std::string(it->value().get_string());
    };
    std::string code = text("code"), msg = text("message"), field = text("field");
    if (!code.empty()) message += " " + code;
    if (!msg.empty()) message += ": " + msg;
    if (!field.empty()) message += " (field: " + field + ")";
  } else if (!body.empty()) {
    message += " from " + std::string(url) + " (is it a hookrelay server?): " + Snippet(body);
  } else {
    message += " from " + std::string(url);
  }
  if (status == 401) {
    return Status::Unauthenticated(message + " (check HOOKRELAY_TOKEN or --token)");
  }
  if (status == 403) return Status::Unauthenticated(message);
  if (status == 404) return Status::NotFound(message);
  if (status >= 400 && status < 500) return Status::InvalidArgument(message);
  return Status::Unavailable(message);
}

ApiClient::ApiClient(ApiConfig config, std::chrono::milliseconds timeout)
    : config_(std::move(config)), timeout_(timeout) {}

Result<json::value> ApiClient::Get(std::string_view path) { return Perform("GET", path, nullptr); }

Result<json::value> ApiClient::Post(std::string_view path, const json::value& body) {
  std::string text = json::serialize(body);
  return Perform("POST", path, &text);
}

Result<json::value> ApiClient::Patch(std::string_view path, const json::value& body) {
  std::string text = json::serialize(body);
  return Perform("PATCH", path, &text);
}

Result<json::value> ApiClient::Delete(std::string_view path) {
  return Perform("DELETE", path, nullptr);
}

Result<json::value> ApiClient::Perform(const char* method, std::string_view path,
                                       const std::string* body) {
  InitCurlOnce();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Internal("cannot initialise libcurl");
  const std::string url = config_.url + std::string(path);
  CURL* h = curl.get();
  std::string response;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_.count()));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");

  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, curl_slist_free_all);
  auto add = [&](const std::string& line) {
    headers.reset(curl_slist_append(headers.release(), line.c_str()));
  };
  add("Accept: application/json");
  if (!config_.token.empty()) add("Authorization: Bearer " + config_.token);
  if (body) {
    add("Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

  CURLcode rc = curl_easy_perform(h);
  if (rc != CURLE_OK) {
    // errbuf names the host and port but never the headers, so the token cannot leak here.
    std::string why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    return Status::Unavailable(
        "cannot reach the hookrelay API at " + config_.url + ": " + why +
        (config_.unreachable_hint.empty() ? "" : " (" + config_.unreachable_hint + ")"));
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  return InterpretResponse(status, response, config_.url);
}

}  // namespace hookrelay::cli
