#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "common/id.h"
#include "common/random.h"
#include "store/store.h"

// Helpers shared by the store test suites.
namespace hookrelay::store::test {

// An event from `source` received now, with one scheduled delivery (due now, 5 attempts) per
// destination. The store assigns its id when it is appended (time-ordered).
inline NewEvent MakeEvent(const Clock& clock, Random& random, std::string body = "{}",
                          std::vector<std::string> destinations = {"billing"},
                          std::string source = "stripe") {
  (void)random;
  NewEvent e;
  e.source = std::move(source);
  e.received_at = clock.Now();
  e.headers = {{"Content-Type", "application/json"}, {"X-Request-Id", "r-1"}};
  e.content_type = "application/json";
  e.body = std::move(body);
  for (std::string& d : destinations) {
    NewDelivery nd;
    nd.destination = std::move(d);
    nd.max_attempts = 5;
    nd.next_attempt_at = clock.Now();
    e.deliveries.push_back(std::move(nd));
  }
  return e;
}

// Every byte value, twice, with NULs at both ends.
inline std::string BinaryBody() {
  std::string s;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
  }
  s.push_back('\0');
  return s;
}

inline std::string RandomBytes(Random& random, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(random.Next() & 0xff);
  return s;
}

}  // namespace hookrelay::store::test
