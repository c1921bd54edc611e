#include "delivery/kinds/http/http_sender.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_received
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "common/ascii.h"
#include "common/mutex.h"
#include "common/thread_name.h"
#include "delivery/kinds/http/classify.h"
#include "delivery/kinds/http/proxy.h"
#include "delivery/ssrf.h"

namespace hookrelay::delivery {
namespace {

using http::IsHeaderLimitError;
using http::MapCurlCode;
using http::NoProxyMatches;
using http::ParseUrl;
using http::ProxySettings;
using http::RefusedDetail;
using http::TlsReason;
using http::UrlParts;
using policy::TransportError;

#ifndef HOOKRELAY_VERSION
#define HOOKRELAY_VERSION "dev"
#endif

// A response body is read past snippet_limit (and the rest discarded) only when its
// Content-Length says it ends within this many bytes: reading it to its end keeps the connection
// reusable. A longer body, or one of unknown length (chunked, or until the connection closes), is
// cut as soon as the snippet is full and the connection closed, so that a huge or endless body
// neither holds the attempt until its timeout nor costs more than the snippet to read. A response
// cut short this way still counts with the status it sent.
constexpr size_t kDrainLimit = 1024 * 1024;

// Easy handles kept for reuse after their transfer completed.
constexpr size_t kMaxIdleHandles = 1024;
// A kept handle keeps the buffers of its header list up to this size.
constexpr size_t kKeptHeaderBytes = 16 * 1024;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return AsciiEqualsIgnoreCase(a, b);
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool HasControl(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string AddressText(const curl_sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address->addr);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) return text;
  } else if (address->family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address->addr);
    if (inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text)) != nullptr) return text;
  }
  return "an address of family " + std::to_string(address->family);
}

// Where an open connection goes: the peer's address and port and the local port. A reused
// connection is found by this (libcurl names it in the pre-request callback, not its socket).
struct SocketKey {
  unsigned char address[16] = {};
  uint16_t port = 0;
  uint16_t local_port = 0;
  bool operator==(const SocketKey&) const = default;
};

struct SocketKeyHash {
  size_t operator()(const SocketKey& k) const {
    uint64_t a, b;
    std::memcpy(&a, k.address, 8);
    std::memcpy(&b, k.address + 8, 8);
    return std::hash<uint64_t>()(a ^ (b * 0x9e3779b97f4a7c15ULL) ^
                                 (uint64_t{k.port} << 16 | k.local_port));
  }
};

SocketKey MakeSocketKey(const char* ip, int port, int local_port) {
  SocketKey k;
  if (inet_pton(AF_INET, ip, k.address) != 1 && inet_pton(AF_INET6, ip, k.address) != 1) {
    // Not numeric (libcurl always gives a numeric address): keep a prefix of the text.
    std::memcpy(k.address, ip, std::min(std::strlen(ip), sizeof k.address));
  }
  k.port = static_cast<uint16_t>(port);
  k.local_port = static_cast<uint16_t>(local_port);
  return k;
}

}  // namespace

struct HttpSender::Impl {
  struct Pending {
    SendRequest request;
    Callback done;
  };

  // An easy handle and the state of the transfer it carries. Kept and reused from one transfer to
  // the next (Impl::idle): the options that never change are set once, when it is made; those
  // that do are set by Start for every transfer, and only when they differ from the last one's.
  // CURLOPT_PRIVATE and every callback's data point here.
  struct Transfer {
    Impl* impl = nullptr;
    CURL* easy = nullptr;
    size_t active_index = 0;  // position in Impl::active while on the multi handle

    // This transfer's; Clear() forgets all of it before the next.
    SendRequest request;
    Callback done;
    TimePoint started_at{};
    Duration mono_start{0};
    std::string snippet;
    size_t body_bytes = 0;
    bool body_cut = false;  // stopped reading after read_limit bytes
    size_t read_limit = 0;  // the body is cut once this many bytes arrived (0: not known yet)
    std::optional<std::string> retry_after;
    bool allow_private = false;
    bool via_proxy = false;
    std::string refused_address;         // set when the guard refused a connection
    bool final_status = false;           // a status line >= 200 arrived
    bool interim = false;                // a 1xx status line arrived
    std::vector<curl_socket_t> opened;   // sockets this transfer opened (new connections)
    curl_socket_t fd = CURL_SOCKET_BAD;  // the connection's socket, once known
    int64_t tcp_base = -1;               // the connection's received-byte count before this request
    uint64_t bytes_in = 0;               // bytes received for this request (while no status line)
    char errbuf[CURL_ERROR_SIZE] = {};

    // The request's header list as libcurl reads it (CURLOPT_HTTPHEADER): the lines, each
    // NUL-terminated, in header_text, the list's nodes in header_nodes. Both keep their capacity,
    // so building the list allocates nothing once the handle has carried a request like it.
    std::string header_text;
    std::vector<size_t> header_offsets;
    std::vector<curl_slist> header_nodes;

    // What is set on the handle now.
    std::string proxy_set;  // CURLOPT_PROXY ("" disables the environment's)
    // The TLS client settings whose blobs are set (libcurl copies them); null: none set. Kept so
    // that a handle carrying the same destination again does not copy them again.
    std::shared_ptr<const model::DestinationTls> tls_set;
    bool default_user_agent = false;  // CURLOPT_USERAGENT is Options::user_agent (else unset)

    void Clear() {
      request = SendRequest{};  // frees the body now, not when the handle is next used
      done = nullptr;
      snippet.clear();
      body_bytes = 0;
      body_cut = false;
      read_limit = 0;
      retry_after.reset();
      allow_private = false;
      via_proxy = false;
      refused_address.clear();
      final_status = false;
      interim = false;
      opened.clear();
      fd = CURL_SOCKET_BAD;
      tcp_base = -1;
      bytes_in = 0;
      errbuf[0] = '\0';
      // An unusually large header list is not kept for every handle in the pool.
      if (header_text.capacity() > kKeptHeaderBytes) {
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);  // it pointed into what goes now
        header_text = std::string();
        header_offsets = std::vector<size_t>();
        header_nodes = std::vector<curl_slist>();
      }
    }

    void AddHeaderLine(std::string_view a, std::string_view b = {}, std::string_view c = {}) {
      header_offsets.push_back(header_text.size());
      header_text.append(a).append(b).append(c).push_back('\0');
    }

    // Links the lines added since the last call into a list; header_text must not change while
    // libcurl may read the list (until the transfer ends).
    curl_slist* LinkHeaders() {
      header_nodes.resize(header_offsets.size());
      for (size_t i = 0; i < header_offsets.size(); ++i) {
        header_nodes[i].data = header_text.data() + header_offsets[i];
        header_nodes[i].next = i + 1 < header_offsets.size() ? &header_nodes[i + 1] : nullptr;
      }
      return header_nodes.empty() ? nullptr : header_nodes.data();
    }

    ~Transfer() {
      if (easy != nullptr) curl_easy_cleanup(easy);
    }
  };

  // An open connection's socket, and the transfer using it now (for its byte count).
  struct OpenSocket {
    SocketKey key;
    Transfer* user = nullptr;
  };

  Impl(Options opts, const Clock& c)
      : options(std::move(opts)), clock(c), proxy(ProxySettings::FromEnvironment()) {
    if (options.user_agent.empty()) options.user_agent = "hookrelay/" HOOKRELAY_VERSION;
    InitCurlOnce();
    multi = curl_multi_init();
    if (options.max_connections > 0) {
      const long max = options.max_connections;
      curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max);
      curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, max);
    }
    thread = std::thread([this] { Run(); });
  }

  ~Impl() {
    {
      MutexLock lock(mu);
      stopping = true;
    }
    curl_multi_wakeup(multi);
    thread.join();
    idle.clear();  // their handles are not on the multi handle
    curl_multi_cleanup(multi);
  }

  void Enqueue(SendRequest request, Callback done) {
    in_flight.fetch_add(1);
    {
      MutexLock lock(mu);
      if (!stopping) {
        const bool was_empty = pending.empty();
        pending.push_back({std::move(request), std::move(done)});
        if (was_empty) curl_multi_wakeup(multi);  // otherwise it was woken already
        return;
      }
    }
    // Only reachable while the HttpSender is being destroyed.
    Finish(request.tag, std::move(done), clock.Now(), Duration(0), TransportError::kOther,
           "shutting down");
  }

  void Run() {
    NameThisThread("hr-sender");
    std::vector<Pending> batch;
    while (true) {
      {
        MutexLock lock(mu);
        if (stopping) break;
        batch.swap(pending);
      }
      for (Pending& p : batch) Start(std::move(p));
      batch.clear();
      int running = 0;
      curl_multi_perform(multi, &running);
      ReapCompleted();
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
    // Shutting down: nothing more is added; everything outstanding completes as kOther.
    for (Transfer* t : active) {
      curl_multi_remove_handle(multi, t->easy);
      Unbind(*t);
      std::unique_ptr<Transfer> owned(t);
      Finish(t->request.tag, std::move(t->done), t->started_at,
             clock.MonotonicNow() - t->mono_start, TransportError::kOther, "shutting down");
    }
    active.clear();
    {
      MutexLock lock(mu);
      batch.swap(pending);
    }
    for (Pending& p : batch) {
      Finish(p.request.tag, std::move(p.done), clock.Now(), Duration(0), TransportError::kOther,
             "shutting down");
    }
  }

  // Completes a request that produced no response.
  void Finish(uint64_t tag, Callback done, TimePoint started_at, Duration duration,
              TransportError error, std::string detail) {
    SendResult r;
    r.tag = tag;
    r.started_at = started_at;
    r.duration = duration;
    r.outcome.error = error;
    r.error_detail = std::move(detail);
    in_flight.fetch_sub(1);
    if (done) done(std::move(r));
  }

  // A handle for the next transfer: a kept one, or a new one with the options that never change.
  std::unique_ptr<Transfer> TakeTransfer() {
    if (!idle.empty()) {
      std::unique_ptr<Transfer> t = std::move(idle.back());
      idle.pop_back();
      return t;
    }
    CURL* e = curl_easy_init();
    if (e == nullptr) return nullptr;
    auto t = std::make_unique<Transfer>();
    t->impl = this;
    t->easy = e;
    Transfer* raw = t.get();
    curl_easy_setopt(e, CURLOPT_PRIVATE, raw);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, raw->errbuf);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_PROXY, "");  // "" disables the environment's
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::OnBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, raw);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, raw);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Impl::OnOpenSocket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, raw);
    // How much of a response arrived before it failed, when the status line never completed
    // (libcurl keeps a partial line to itself): the kernel's byte count of the connection, read
    // when the request starts and again when the connection closes or the transfer ends.
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &Impl::OnPrereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, raw);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &Impl::CloseSocket);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
    return t;
  }

  // Back to the pool (or freed, past kMaxIdleHandles), with nothing of its transfer left.
  void Recycle(std::unique_ptr<Transfer> t) {
    t->Clear();
    if (idle.size() < kMaxIdleHandles) idle.push_back(std::move(t));
  }

  void Start(Pending p) {
    std::unique_ptr<Transfer> t = TakeTransfer();
    if (t == nullptr) {
      Finish(p.request.tag, std::move(p.done), clock.Now(), Duration(0), TransportError::kOther,
             "curl_easy_init failed");
      return;
    }
    t->request = std::move(p.request);
    t->done = std::move(p.done);
    t->started_at = clock.Now();
    t->mono_start = clock.MonotonicNow();
    t->allow_private = options.allow_private_destinations || t->request.allow_private;

    // Proxy choice (see the class comment in http_sender.h and ProxySettings). Without any proxy
    // configured there is nothing to choose, and the URL is left to libcurl alone.
    std::string_view proxy_url;
    if (!proxy.http.empty() || !proxy.https.empty()) {
      UrlParts url;
      if (ParseUrl(t->request.url, url) && !NoProxyMatches(proxy.no_proxy, url.host)) {
        if (url.scheme == "http") proxy_url = proxy.http;
        if (url.scheme == "https") proxy_url = proxy.https;
      }
      if (!proxy_url.empty()) {
        t->via_proxy = true;
        // The proxy resolves the name and connects, so the socket guard only sees the proxy.
        // What can be judged here is a literal address or "localhost" in the URL.
        if (!t->allow_private && IsRefusedLiteralHost(url.host)) {
          Finish(t->request.tag, std::move(t->done), t->started_at, Duration(0),
                 TransportError::kPrivateAddress, RefusedDetail(AsciiLower(url.host)));
          Recycle(std::move(t));
          return;
        }
      }
    }

    // The header list, built in the handle's own buffers.
    t->header_text.clear();
    t->header_offsets.clear();
    bool has_content_type = false, has_accept = false, has_user_agent = false;
    for (const auto& [name, value] : t->request.headers) {
      // Fields that would split the request, and framing the sender manages itself, are dropped.
      if (name.empty() || HasControl(name) || HasControl(value) ||
          name.find_first_of(": \t") != std::string::npos) {
        continue;
      }
      if (EqualsIgnoreCase(name, "content-length") || EqualsIgnoreCase(name, "transfer-encoding") ||
          EqualsIgnoreCase(name, "expect")) {
        continue;
      }
      has_content_type |= EqualsIgnoreCase(name, "content-type");
      has_accept |= EqualsIgnoreCase(name, "accept");
      has_user_agent |= EqualsIgnoreCase(name, "user-agent");
      // "Name;" is libcurl's way to send a field with an empty value.
      if (value.empty()) {
        t->AddHeaderLine(name, ";");
      } else {
        t->AddHeaderLine(name, ": ", value);
      }
    }
    t->AddHeaderLine("Expect:");
    // libcurl's defaults for a POST ("Content-Type: application/x-www-form-urlencoded",
    // "Accept: */*") are not ours to add.
    if (!has_content_type) t->AddHeaderLine("Content-Type:");
    if (!has_accept) t->AddHeaderLine("Accept:");

    CURL* e = t->easy;
    curl_easy_setopt(e, CURLOPT_URL, t->request.url.c_str());
    // A reused handle: set (or reset to POST) every time.
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST,
                     t->request.method == "POST" ? nullptr : t->request.method.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t->request.body.size()));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->request.body.data());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->LinkHeaders());
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(std::max<int64_t>(1, t->request.timeout.count())));
    if (proxy_url != t->proxy_set) {
      t->proxy_set = proxy_url;
      curl_easy_setopt(e, CURLOPT_PROXY, t->proxy_set.c_str());
    }
    if (t->request.tls != t->tls_set) {
      // libcurl keys its connections (and TLS sessions) on these blobs too, so a connection made
      // with one destination's client certificate is never reused for a request with another or
      // none (sender_tls_test checks it).
      t->tls_set = t->request.tls;
      auto blob = [](const std::string& pem) {
        return curl_blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
      };
      const model::DestinationTls* tls = t->tls_set.get();
      curl_blob cert{}, key{}, ca{};
      if (tls != nullptr) {
        cert = blob(tls->client_cert);
        key = blob(tls->client_key);
        ca = blob(tls->ca);
      }
      const bool has_cert = tls != nullptr && !tls->client_cert.empty();
      const bool has_ca = tls != nullptr && !tls->ca.empty();
      curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, has_cert ? &cert : nullptr);
      curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, has_cert ? &key : nullptr);
      curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, has_ca ? &ca : nullptr);
    }
    if (has_user_agent == t->default_user_agent) {
      t->default_user_agent = !has_user_agent;
      curl_easy_setopt(e, CURLOPT_USERAGENT,
                       t->default_user_agent ? options.user_agent.c_str() : nullptr);
    }

    if (CURLMcode mc = curl_multi_add_handle(multi, e); mc != CURLM_OK) {
      Finish(t->request.tag, std::move(t->done), t->started_at, Duration(0), TransportError::kOther,
             std::string("curl_multi_add_handle: ") + curl_multi_strerror(mc));
      Recycle(std::move(t));
      return;
    }
    t->active_index = active.size();
    active.push_back(t.release());
  }

  void ReapCompleted() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* e = msg->easy_handle;
      const CURLcode code = msg->data.result;
      char* priv = nullptr;
      curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
      std::unique_ptr<Transfer> t(reinterpret_cast<Transfer*>(priv));
      // Out of `active` (the last one takes its place).
      active[t->active_index] = active.back();
      active[t->active_index]->active_index = t->active_index;
      active.pop_back();
      curl_multi_remove_handle(multi, e);
      Complete(*t, code);
      Unbind(*t);
      // The handle is kept for a later transfer: creating one per attempt costs more than the
      // attempt's own work.
      Recycle(std::move(t));
    }
  }

  void Complete(Transfer& t, CURLcode code) {
    SendResult r;
    r.tag = t.request.tag;
    r.started_at = t.started_at;
    r.duration = clock.MonotonicNow() - t.mono_start;
    if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && t.body_cut)) {
      long status = 0;
      curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
      r.outcome.status_code = static_cast<int>(status);
      r.outcome.retry_after = std::move(t.retry_after);
    } else if ((code == CURLE_COULDNT_CONNECT || code == CURLE_ABORTED_BY_CALLBACK) &&
               !t.refused_address.empty()) {
      r.outcome.error = TransportError::kPrivateAddress;
      r.error_detail = RefusedDetail(t.refused_address);
    } else {
      r.outcome.error = MapCurlCode(code);
      r.error_detail = t.errbuf[0] != '\0' ? std::string(t.errbuf) : curl_easy_strerror(code);
      // A garbage status line reads as HTTP/0.9, which is not allowed.
      if (code == CURLE_UNSUPPORTED_PROTOCOL &&
          r.error_detail.find("HTTP/0.9") != std::string::npos) {
        r.outcome.error = TransportError::kMalformedResponse;
      }
      // A status line that arrived is kept, so the reason can say "timeout after status 200"
      // instead of "did not answer" (CONNECT answers of a proxy are not counted here). A 1xx is
      // not a final status: it is not kept, only noted.
      long status = 0;
      curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
      if (status >= 100 && status < 200 && !t.final_status) {
        r.outcome.only_interim = true;
        status = 0;
      }
      r.outcome.status_code = static_cast<int>(status);
      if (status == 0 && !r.outcome.only_interim && !t.interim) {
        // The connection is usually closed by now (CloseSocket counted); if not, count now.
        if (IsBound(t)) CountBytesIn(t);
        r.outcome.bytes_received = t.bytes_in;
      }
      // libcurl counts body bytes only: "… with 0 bytes received" would contradict the reason.
      if (r.outcome.bytes_received > 0 || r.outcome.only_interim) {
        constexpr std::string_view kNone = " with 0 bytes received";
        if (size_t at = r.error_detail.find(kNone); at != std::string::npos) {
          r.error_detail.erase(at, kNone.size());
        }
      }
      if (IsHeaderLimitError(code, r.error_detail, status, t.body_bytes)) {
        r.outcome.error = TransportError::kResponseTooLarge;
      } else if (auto tls = TlsReason(code, r.error_detail,
                                      t.request.tls && !t.request.tls->client_cert.empty())) {
        r.outcome.error = TransportError::kTls;
        r.error_detail = std::move(*tls);
      }
    }
    r.snippet_cut = t.body_cut || t.body_bytes > t.snippet.size();
    r.snippet = std::move(t.snippet);
    r.request = std::move(t.request);  // freed by the caller, off this thread
    in_flight.fetch_sub(1);
    Callback done = std::move(t.done);
    if (done) done(std::move(r));
  }

  static size_t OnBody(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    const size_t snippet_limit = t->impl->options.snippet_limit;
    if (t->snippet.size() < snippet_limit) {
      t->snippet.append(data, std::min(n, snippet_limit - t->snippet.size()));
    }
    if (t->read_limit == 0) {
      curl_off_t length = -1;
      if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) != CURLE_OK) {
        length = -1;
      }
      const bool small = length >= 0 && static_cast<uint64_t>(length) <= kDrainLimit;
      // Cut once this many bytes arrived: past the drain limit (a body longer than it said), or
      // as soon as the snippet is full.
      t->read_limit =
          small ? std::max(kDrainLimit, snippet_limit) + 1 : std::max<size_t>(1, snippet_limit);
    }
    t->body_bytes += n;
    if (t->body_bytes >= t->read_limit) {
      t->body_cut = true;
      return 0;  // stops the transfer (CURLE_WRITE_ERROR); the connection is not reused
    }
    return n;
  }

  static size_t OnHeader(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    std::string_view line(data, n);
    if (line.starts_with("HTTP/")) {
      // A new response begins (after a 1xx or a proxy's CONNECT answer): forget the last one's.
      t->retry_after.reset();
      const size_t space = line.find(' ');
      if (space != std::string_view::npos && space + 1 < line.size()) {
        if (line[space + 1] == '1') {
          t->interim = true;
        } else {
          t->final_status = true;
        }
      }
    } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
      if (!t->retry_after && EqualsIgnoreCase(Trim(line.substr(0, colon)), "retry-after")) {
        t->retry_after = std::string(Trim(line.substr(colon + 1)));
      }
    }
    return n;
  }

  // Bytes the kernel has received on socket `fd` so far, or -1.
  static int64_t TcpBytesReceived(curl_socket_t fd) {
    if (fd == CURL_SOCKET_BAD) return -1;
    struct tcp_info info {};
    socklen_t len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
      return -1;
    }
    return static_cast<int64_t>(info.tcpi_bytes_received);
  }

  static int LocalPort(curl_socket_t fd) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return -1;
    if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
    return -1;
  }

  // The bytes of this transfer's response so far, while it has no status line, from the
  // connection's count (not useful once a status line arrived: libcurl tells the rest).
  static void CountBytesIn(Transfer& t) {
    if (t.final_status || t.interim || t.tcp_base < 0) return;
    const int64_t now = TcpBytesReceived(t.fd);
    if (now > t.tcp_base) t.bytes_in = static_cast<uint64_t>(now - t.tcp_base);
  }

  bool IsBound(const Transfer& t) const {
    if (t.fd == CURL_SOCKET_BAD) return false;
    auto it = sockets_by_fd.find(t.fd);
    return it != sockets_by_fd.end() && it->second.user == &t;
  }

  // The transfer is over: its connection (if still open) is no longer its.
  void Unbind(Transfer& t) {
    if (t.fd == CURL_SOCKET_BAD) return;
    if (auto it = sockets_by_fd.find(t.fd); it != sockets_by_fd.end() && it->second.user == &t) {
      it->second.user = nullptr;
    }
  }

  // The connection is ready (new or reused) and the request about to be sent on it.
  //
  // The SSRF guard, again: a kept-alive connection is reused by any request to the same host and
  // port, so one opened for a request that allowed private addresses would otherwise carry one
  // that does not. Its address is judged here, before anything is sent (a new connection's
  // address passed OnOpenSocket already).
  //
  // Then its socket and its byte count. libcurl does not tell the socket of a transfer in
  // progress; a new connection's is among those this transfer opened, a reused one's was
  // recorded when it was new (keyed by its address and ports), and CloseSocket forgets it.
  // Through a proxy nothing is judged or counted (the connection goes to the proxy).
  static int OnPrereq(void* user, char* primary_ip, char*, int primary_port, int local_port) {
    auto* t = static_cast<Transfer*>(user);
    if (t->via_proxy) return CURL_PREREQFUNC_OK;
    if (!t->allow_private && IsPrivateAddress(primary_ip)) {
      if (t->refused_address.empty()) t->refused_address = primary_ip;
      return CURL_PREREQFUNC_ABORT;  // CURLE_ABORTED_BY_CALLBACK; the connection is closed
    }
    Impl& impl = *t->impl;
    const SocketKey key = MakeSocketKey(primary_ip, primary_port, local_port);
    for (curl_socket_t fd : t->opened) {
      if (LocalPort(fd) == local_port) {
        impl.sockets_by_key[key] = fd;
        impl.sockets_by_fd[fd] = OpenSocket{key, nullptr};
        break;
      }
    }
    auto it = impl.sockets_by_key.find(key);
    t->fd = it == impl.sockets_by_key.end() ? CURL_SOCKET_BAD : it->second;
    if (t->fd != CURL_SOCKET_BAD) {
      if (auto s = impl.sockets_by_fd.find(t->fd); s != impl.sockets_by_fd.end()) {
        s->second.user = t;
      }
    }
    t->tcp_base = TcpBytesReceived(t->fd);
    return CURL_PREREQFUNC_OK;
  }

  // libcurl closes a connection: a transfer it failed (a timeout, a reset) is still using it,
  // so that transfer's byte count is taken now, the last moment the socket can tell it.
  static int CloseSocket(void* user, curl_socket_t fd) {
    auto* impl = static_cast<Impl*>(user);
    if (auto it = impl->sockets_by_fd.find(fd); it != impl->sockets_by_fd.end()) {
      if (it->second.user != nullptr && it->second.user->fd == fd) CountBytesIn(*it->second.user);
      if (auto k = impl->sockets_by_key.find(it->second.key);
          k != impl->sockets_by_key.end() && k->second == fd) {
        impl->sockets_by_key.erase(k);
      }
      impl->sockets_by_fd.erase(it);
    }
    return ::close(fd);
  }

  static curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
    auto* t = static_cast<Transfer*>(user);
    // Through a proxy the socket goes to the proxy the operator configured, not to the
    // destination; it is not judged here (see Start for what is).
    if (purpose == CURLSOCKTYPE_IPCXN && !t->allow_private && !t->via_proxy) {
      std::string text = AddressText(address);
      if (IsPrivateAddress(text)) {
        if (t->refused_address.empty()) t->refused_address = text;
        return CURL_SOCKET_BAD;
      }
    }
    curl_socket_t fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd != CURL_SOCKET_BAD) t->opened.push_back(fd);
    return fd;
  }

  Options options;
  const Clock& clock;
  const ProxySettings proxy;
  CURLM* multi = nullptr;
  std::atomic<int> in_flight{0};
  // Open connections (sender thread only; libcurl calls back on it, and at cleanup after it).
  std::unordered_map<SocketKey, curl_socket_t, SocketKeyHash> sockets_by_key;
  std::unordered_map<curl_socket_t, OpenSocket> sockets_by_fd;

  Mutex mu;
  bool stopping GUARDED_BY(mu) = false;
  std::vector<Pending> pending GUARDED_BY(mu);
  std::vector<Transfer*> active;                // owned; only touched on the sender thread
  std::vector<std::unique_ptr<Transfer>> idle;  // ready for reuse; sender thread only
  std::thread thread;
};

HttpSender::HttpSender(Options options, const Clock& clock) {
  const int n = std::max(1, options.threads);
  Options each = options;
  // The cap holds for all of them together.
  if (options.max_connections > 0) each.max_connections = std::max(1, options.max_connections / n);
  for (int i = 0; i < n; ++i) impls_.push_back(std::make_unique<Impl>(each, clock));
}

HttpSender::~HttpSender() = default;

void HttpSender::Send(SendRequest request, Callback done) {
  Impl& impl = *impls_[next_.fetch_add(1, std::memory_order_relaxed) % impls_.size()];
  impl.Enqueue(std::move(request), std::move(done));
}

int HttpSender::InFlight() const {
  int n = 0;
  for (const auto& impl : impls_) n += impl->in_flight.load();
  return n;
}

}  // namespace hookrelay::delivery
