#include "common/random.h"

#include <random>

namespace hookrelay {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t OsSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

double Random::Uniform01() {
  // 53 random bits → a double in [0, 1).
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

int64_t Random::UniformInt(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(Next());
  const uint64_t range = span + 1;
  // Rejection sampling removes modulo bias.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % range);
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
}

SeededRandom::SeededRandom(uint64_t seed) {
  for (auto& s : s_) s = SplitMix64(seed);
}

uint64_t SeededRandom::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

SystemRandom::SystemRandom() : rng_(OsSeed()) {}

uint64_t SystemRandom::Next() {
  MutexLock lock(mu_);
  return rng_.Next();
}

SystemRandom& SystemRandom::Instance() {
  static SystemRandom random;
  return random;
}

}  // namespace hookrelay
