#include "alerts/alert_dispatcher.h"

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <memory>

#include "alerts/alert_text.h"
#include "common/crypto.h"
#include "common/time_format.h"

namespace hookrelay::alerts {

namespace {

using SteadyClock = std::chrono::steady_clock;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

bool Append(SlistPtr& list, const std::string& item) {
  curl_slist* next = curl_slist_append(list.get(), item.c_str());
  if (!next) return false;
  (void)list.release();
  list.reset(next);
  return true;
}

struct Upload {
  std::string data;
  size_t pos = 0;
};

size_t ReadUpload(char* buffer, size_t size, size_t nitems, void* userdata) {
  auto* u = static_cast<Upload*>(userdata);
  size_t n = std::min(size * nitems, u->data.size() - u->pos);
  std::copy_n(u->data.data() + u->pos, n, buffer);
  u->pos += n;
  return n;
}

size_t Discard(char*, size_t size, size_t nmemb, void*) { return size * nmemb; }

// No CR, LF or other control characters: one header field line, or one log line.
std::string OneLine(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  return out;
}

// A header value; RFC 2047 base64 encoded-word when it is not plain ASCII.
std::string HeaderText(std::string_view s) {
  std::string line = OneLine(s);
  bool ascii = std::all_of(line.begin(), line.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return line;
  return "=?UTF-8?B?" + Base64Encode(line) + "?=";
}

// Body text with CRLF line ends and no line over 998 octets (RFC 5322 2.1.1).
std::string BodyLines(std::string_view text) {
  constexpr size_t kMaxLine = 900;
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    do {
      std::string_view part = line.substr(0, kMaxLine);
      for (char c : part) out += c == '\r' ? ' ' : c;
      out += "\r\n";
      line.remove_prefix(part.size());
    } while (!line.empty());
    if (end == text.size()) break;
    start = end + 1;
  }
  return out;
}

std::string Domain(const std::string& address) {
  size_t at = address.rfind('@');
  return at == std::string::npos ? "hookrelay.invalid" : address.substr(at + 1);
}

}  // namespace

std::string BuildEmail(const Alert& a, const AlertsConfig& config, TimePoint now) {
  std::string date = FormatHttpDate(now);  // "Sun, 06 Nov 1994 08:49:37 GMT"
  if (date.size() > 4 && date.ends_with(" GMT")) date.replace(date.size() - 3, 3, "+0000");
  std::string to;
  for (const auto& t : config.to) to += (to.empty() ? "" : ", ") + OneLine(t);
  std::string m;
  m += "From: hookrelay <" + OneLine(config.from) + ">\r\n";
  m += "To: " + to + "\r\n";
  m += "Subject: " + HeaderText(AlertSubject(a)) + "\r\n";
  m += "Date: " + date + "\r\n";
  m += "Message-ID: <" + RandomHexToken(16) + "@" + OneLine(Domain(config.from)) + ">\r\n";
  m += "MIME-Version: 1.0\r\n";
  m += "Content-Type: text/plain; charset=utf-8\r\n";
  m += "Content-Transfer-Encoding: 8bit\r\n";
  m += "Auto-Submitted: auto-generated\r\n";
  m += "X-Hookrelay-Alert: " + std::string(AlertKindName(a.kind)) + "\r\n";
  m += "\r\n";
  m += BodyLines(AlertBody(a, config.window));
  return m;
}

AlertDispatcher::AlertDispatcher(AlertsConfig config, const Clock& clock,
                                 AlertDispatcherOptions options)
    : config_(std::move(config)),
      clock_(clock),
      options_(options),
      batcher_(config_.window),
      loop_("hr-alerts", clock) {
  if (!config_.enabled()) return;
  GlobalInit();
  loop_.Start([this] { return Pass(); });
}

AlertDispatcher::~AlertDispatcher() { Close(); }

AlertDispatcher::Stats AlertDispatcher::Close() {
  {
    MutexLock lock(mu_);
    if (closed_) return stats_;
    closed_ = true;
  }
  loop_.Stop();  // a send in progress ends first (at most send_timeout)
  if (config_.enabled()) FlushAtShutdown();
  return stats();
}

void AlertDispatcher::Raise(Alert a) {
  MutexLock lock(mu_);
  ++stats_.raised;
  if (!config_.enabled() || loop_.stopping()) return;
  const std::optional<TimePoint> next_before = batcher_.NextDue();
  auto now_due = batcher_.Add(std::move(a), clock_.Now());
  if (now_due.empty()) {
    // A new batch (or held repeat) may fall due before the time the thread sleeps until.
    if (batcher_.NextDue() != next_before) loop_.RunNow();
    return;
  }
  Enqueue(std::move(now_due));
  loop_.RunNow();
}

void AlertDispatcher::Enqueue(std::vector<Alert> alerts) {
  for (auto& a : alerts) {
    if (ready_.size() >= options_.max_pending) {
      ++stats_.dropped;
      continue;
    }
    ready_.push_back(std::move(a));
  }
}

AlertDispatcher::Stats AlertDispatcher::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

Duration AlertDispatcher::Pass() {
  std::vector<Alert> batch;
  {
    MutexLock lock(mu_);
    Enqueue(batcher_.Due(clock_.Now()));
    batch = std::move(ready_);
    ready_.clear();
  }
  size_t i = 0;
  for (; i < batch.size() && !loop_.stopping(); ++i) Send(batch[i], options_.send_timeout);
  MutexLock lock(mu_);
  if (!batch.empty()) {
    // Anything not sent because of shutdown goes out with the flush, first.
    ready_.insert(ready_.begin(),
                  std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(i)),
                  std::make_move_iterator(batch.end()));
    return Duration(0);  // look again at once: more may have fallen due while sending
  }
  // Until the next batch falls due, on the clock (a FakeClock a test moves wakes it), or a
  // batch Raise started falls due earlier (Raise calls RunNow then). Capped so a wall clock set
  // forward is noticed.
  const TimePoint now = clock_.Now();
  TimePoint until = now + options_.max_idle_wait;
  if (auto next = batcher_.NextDue()) until = std::min(until, *next);
  return std::max(Duration(0), until - now);
}

void AlertDispatcher::FlushAtShutdown() {
  // Whatever is ready, then every pending batch, within flush_timeout.
  std::vector<Alert> rest;
  {
    MutexLock lock(mu_);
    rest = std::move(ready_);
    ready_.clear();
    for (auto& a : batcher_.Flush()) rest.push_back(std::move(a));
  }
  // Real time, not the clock's: it bounds how long a shutdown takes, whatever the clock says.
  const auto deadline = SteadyClock::now() + options_.flush_timeout;
  for (const Alert& a : rest) {
    auto left = std::chrono::duration_cast<Duration>(deadline - SteadyClock::now());
    if (left <= Duration(0)) {
      MutexLock count(mu_);
      ++stats_.dropped;
      continue;
    }
    Send(a, std::min(left, options_.send_timeout));
  }
}

void AlertDispatcher::Send(const Alert& a, Duration timeout) {
  auto report = [&](const char* channel, bool ok, std::string error) {
    {
      MutexLock lock(mu_);
      ++(ok ? stats_.sent : stats_.failed);
    }
    if (ok) {
      spdlog::debug("{} alert {} for destination {} sent", channel, AlertKindName(a.kind),
                    OneLine(a.destination));
      return;
    }
    if (!config_.password.empty()) {
      for (size_t p; (p = error.find(config_.password)) != std::string::npos;) {
        error.replace(p, config_.password.size(), "***");
      }
    }
    spdlog::warn("{} alert {} for destination {} failed: {}", channel, AlertKindName(a.kind),
                 OneLine(a.destination), OneLine(error));
  };
  if (config_.email_enabled()) {
    std::string error;
    bool ok = SendEmail(a, timeout, error);
    report("email", ok, std::move(error));
  }
  if (config_.webhook_enabled()) {
    std::string error;
    bool ok = PostWebhook(a, timeout, error);
    report("webhook", ok, std::move(error));
  }
}

bool AlertDispatcher::SendEmail(const Alert& a, Duration timeout, std::string& error) {
  CurlPtr curl(curl_easy_init());
  if (!curl) {
    error = "curl_easy_init failed";
    return false;
  }
  CURL* c = curl.get();
  Upload upload{BuildEmail(a, config_, clock_.Now())};
  SlistPtr rcpt;
  for (const auto& t : config_.to) {
    if (!Append(rcpt, "<" + t + ">")) {
      error = "out of memory";
      return false;
    }
  }
  std::string from = "<" + config_.from + ">";
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, config_.smtp_url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(c, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt.get());
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_READFUNCTION, &ReadUpload);
  curl_easy_setopt(c, CURLOPT_READDATA, &upload);
  curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(upload.data.size()));
  if (config_.starttls) curl_easy_setopt(c, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  if (!config_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  if (!config_.username.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, config_.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, config_.password.c_str());
  }
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, timeout.count())));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max<int64_t>(1, timeout.count())));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    if (code != 0) error += " (SMTP " + std::to_string(code) + ")";
    return false;
  }
  return true;
}

bool AlertDispatcher::PostWebhook(const Alert& a, Duration timeout, std::string& error) {
  CurlPtr curl(curl_easy_init());
  if (!curl) {
    error = "curl_easy_init failed";
    return false;
  }
  CURL* c = curl.get();
  std::string body = boost::json::serialize(AlertToJson(a, config_.window));
  SlistPtr headers;
  if (!Append(headers, "Content-Type: application/json") ||
      !Append(headers, "User-Agent: hookrelay-alerts/" HOOKRELAY_VERSION)) {
    error = "out of memory";
    return false;
  }
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, config_.webhook_url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!config_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, timeout.count())));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    return false;
  }
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  if (code < 200 || code > 299) {
    error = "HTTP " + std::to_string(code);
    return false;
  }
  return true;
}

}  // namespace hookrelay::alerts
