#pragma once

#include <cstdint>
#include <mutex>

#include "common/mutex.h"

namespace hookrelay {

// Source of randomness, injected into pure logic (jitter, ids) so tests can pin it.
// The helpers map raw 64-bit draws to ranges themselves (not std::*_distribution, whose output
// differs between standard libraries), so a seed gives the same numbers everywhere.
class Random {
 public:
  virtual ~Random() = default;
  // A uniformly distributed 64-bit value.
  virtual uint64_t Next() = 0;

  // Uniform in [0, 1).
  double Uniform01();
  // Uniform integer in [lo, hi]. REQUIRES: lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
};

// xoshiro256** seeded through splitmix64: fast, good quality, reproducible from a seed.
// Not thread-safe; wrap in LockedRandom to share.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed);
  uint64_t Next() override;

 private:
  uint64_t s_[4];
};

// A SeededRandom seeded from the operating system, safe to share between threads.
class SystemRandom final : public Random {
 public:
  SystemRandom();
  uint64_t Next() override;
  static SystemRandom& Instance();

 private:
  Mutex mu_;
  SeededRandom rng_ GUARDED_BY(mu_);
};

}  // namespace hookrelay
