// bench/sender_floor: how fast HTTP requests go out of this process with no store behind them,
// the reference the deliver suite prints next to hookrelay's end-to-end rate.
//
//   sender_floor curl|sender URL CONCURRENCY REQUESTS
//
// curl:   bare libcurl multi (the interface hookrelay's sender uses): CONCURRENCY easy handles
//         POSTing a 1 KiB body with keep-alive, each re-added as soon as it completes. The most a
//         libcurl-based sender can do on this machine.
// sender: hookrelay's own HttpSender (delivery/kinds/http/http_sender.h) with the Standard
//         Webhooks headers of a signed delivery, CONCURRENCY requests kept in flight, on as
//         many sending threads as `hookrelay serve` uses (min(2, cores); SENDER_THREADS=N
//         overrides).
// Prints "<rate> requests/s" and exits 1 if any request did not get a 2xx.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "common/allocator.h"
#include "common/clock.h"
#include "delivery/kinds/http/http_sender.h"
#include "delivery/signer.h"

using namespace hookrelay;

namespace {

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

// Returns the number of 2xx answers.
long RunCurl(const std::string& url, long concurrency, long requests, const std::string& body) {
  curl_global_init(CURL_GLOBAL_ALL);
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, concurrency);
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, concurrency);
  curl_slist* headers = nullptr;
  for (const char* h :
       {"Content-Type: application/json", "Expect:", "webhook-id: evt_01JDQ3W8Z6Y0R6F3G3X6K5V9T1",
        "webhook-timestamp: 1764500000",
        "webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="}) {
    headers = curl_slist_append(headers, h);
  }
  long started = 0, finished = 0, ok = 0;
  auto add = [&](CURL* easy) {
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, Discard);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_multi_add_handle(multi, easy);
    ++started;
  };
  for (long i = 0; i < concurrency && started < requests; ++i) add(curl_easy_init());
  while (finished < requests) {
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      long code = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
      if (msg->data.result == CURLE_OK && code >= 200 && code < 300) ++ok;
      ++finished;
      curl_multi_remove_handle(multi, easy);
      if (started < requests) {
        add(easy);
      } else {
        curl_easy_cleanup(easy);
      }
    }
    if (finished < requests) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  }
  curl_slist_free_all(headers);
  curl_multi_cleanup(multi);
  return ok;
}

long RunSender(const std::string& url, long concurrency, long requests, const std::string& body) {
  const Clock& clock = SystemClock::Instance();
  delivery::HttpSender::Options options;
  options.allow_private_destinations = true;
  options.max_connections = static_cast<int>(concurrency);
  // As `hookrelay serve` sets it (SENDER_THREADS overrides, to compare).
  options.threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 2u));
  if (const char* t = std::getenv("SENDER_THREADS")) options.threads = std::atoi(t);
  delivery::HttpSender sender(options, clock);
  const std::string key(32, 'k');
  std::mutex mu;
  std::condition_variable cv;
  long in_flight = 0, finished = 0, ok = 0;
  for (long i = 0; i < requests; ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < concurrency; });
      ++in_flight;
    }
    delivery::SendRequest req;
    req.tag = static_cast<uint64_t>(i);
    req.url = url;
    req.allow_private = true;
    req.headers.emplace_back("Content-Type", "application/json");
    for (auto& h : delivery::StandardWebhookHeaders("evt_01JDQ3W8Z6Y0R6F3G3X6K5V9T1", clock.Now(),
                                                    body, {key})) {
      req.headers.push_back(std::move(h));
    }
    req.body = body;
    sender.Send(std::move(req), [&](delivery::SendResult r) {
      std::lock_guard lock(mu);
      if (r.outcome.status_code >= 200 && r.outcome.status_code < 300) {
        ++ok;
      }
      ++finished;
      --in_flight;
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return finished == requests; });
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: sender_floor curl|sender URL CONCURRENCY REQUESTS\n";
    return 2;
  }
  const std::string mode = argv[1], url = argv[2];
  const long concurrency = std::stol(argv[3]), requests = std::stol(argv[4]);
  if ((mode != "curl" && mode != "sender") || concurrency < 1 || requests < 1) {
    std::cerr << "usage: sender_floor curl|sender URL CONCURRENCY REQUESTS\n";
    return 2;
  }
  TuneAllocator();  // as `hookrelay serve` does
  const std::string body(1024, 'x');
  const auto start = std::chrono::steady_clock::now();
  const long ok = mode == "curl" ? RunCurl(url, concurrency, requests, body)
                                 : RunSender(url, concurrency, requests, body);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << static_cast<long>(static_cast<double>(requests) / secs) << " requests/s\n";
  if (ok != requests) {
    std::cerr << "sender_floor: " << requests - ok << " of " << requests << " requests failed\n";
    return 1;
  }
  return 0;
}
