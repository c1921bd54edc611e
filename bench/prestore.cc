// bench/prestore: fills a store with events through the Store API (group-committed), so the
// delivery and backlog benchmarks start from a known backlog without going through HTTP.
//
//   prestore DIR|URL EVENTS DESTINATION DUE_IN_MS [SPREAD_MS] [BODY_BYTES] [IDS_FILE|-] [IN_FLIGHT]
//            [BODY_FILE]
//
// Each event gets one delivery to DESTINATION, due at now + DUE_IN_MS + i * SPREAD_MS / EVENTS
// (with DUE_IN_MS and SPREAD_MS 0: due when received, as ingest makes them).
// With IDS_FILE, writes "id due_unix_ms" per event as its append commits (for lateness
// measurements). IN_FLIGHT
// (default 4096) caps the appends waiting for their commit: the ingest suite sets it to wrk's
// connection count to measure what the store alone sustains under HTTP's concurrency. With
// BODY_FILE, every event's body is that file's bytes (BODY_BYTES is then ignored): the
// deliver_transform suite's Stripe-like JSON, which its transform reads.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <string>

#include "common/allocator.h"
#include "common/clock.h"
#include "store/open_store.h"
#include "store/store.h"

using namespace hookrelay;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: prestore DIR|URL EVENTS DESTINATION DUE_IN_MS [SPREAD_MS] [BODY_BYTES] "
                 "[IDS_FILE|-] [IN_FLIGHT] [BODY_FILE]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const long events = std::stol(argv[2]);
  const std::string destination = argv[3];
  const long due_in_ms = std::stol(argv[4]);
  const long spread_ms = argc > 5 ? std::stol(argv[5]) : 0;
  const size_t body_bytes = argc > 6 ? std::stoul(argv[6]) : 1024;
  std::ofstream ids;
  if (argc > 7 && std::string(argv[7]) != "-") ids.open(argv[7]);
  const long window = argc > 8 ? std::stol(argv[8]) : 4096;
  if (window < 1) {
    std::cerr << "prestore: IN_FLIGHT must be at least 1\n";
    return 2;
  }

  TuneAllocator();  // as `hookrelay serve` does
  const Clock& clock = SystemClock::Instance();
  // A data directory (the embedded store) or a postgres:// URL (the postgres suite).
  auto opened = store::OpenStore(dir, clock);
  if (!opened.ok()) {
    std::cerr << "prestore: " << opened.status().ToString() << "\n";
    return 1;
  }
  std::unique_ptr<store::Store> store = std::move(*opened);
  std::string body = "{\"type\":\"bench\",\"pad\":\"" +
                     std::string(body_bytes > 32 ? body_bytes - 32 : 0, 'x') + "\"}";
  if (argc > 9) {
    std::ifstream in(argv[9], std::ios::binary);
    if (!in) {
      std::cerr << "prestore: cannot read " << argv[9] << "\n";
      return 2;
    }
    body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  std::mutex mu;
  std::condition_variable cv;
  long outstanding = 0, failed = 0;
  const TimePoint start = clock.Now();
  for (long i = 0; i < events; ++i) {
    store::NewEvent e;
    e.source = "bench";
    e.received_at = clock.Now();
    e.content_type = "application/json";
    e.body = body;
    store::NewDelivery d;
    d.destination = destination;
    d.max_attempts = 5;
    // DUE_IN_MS 0 and no spread: due when received, as ingest makes deliveries (the store keeps
    // those out of every index until a retry); otherwise due at a set time, like a retry.
    d.next_attempt_at =
        due_in_ms == 0 && spread_ms == 0
            ? e.received_at
            : start + Duration(due_in_ms + (events > 0 ? i * spread_ms / events : 0));
    e.deliveries.push_back(d);
    const int64_t due_ms = ToUnixMillis(d.next_attempt_at);
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return outstanding < window; });
    ++outstanding;
    lock.unlock();
    store->AppendEvent(std::move(e), [&, due_ms](Result<store::AppendResult> r) {
      std::lock_guard l(mu);
      if (!r.ok()) ++failed;
      // The store assigns the id (the webhook-id the sink will see).
      if (r.ok() && ids.is_open()) ids << r->id << " " << due_ms << "\n";
      --outstanding;
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return outstanding == 0; });
  const double secs = static_cast<double>((clock.Now() - start).count()) / 1000.0;
  std::cout << "prestored " << events - failed << " events in " << secs << " s ("
            << static_cast<long>(static_cast<double>(events - failed) / std::max(secs, 0.001))
            << " events/s, at most " << window << " in flight)\n";
  return failed == 0 ? 0 : 1;
}
