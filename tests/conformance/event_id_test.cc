// The pure functions that map event keys to ids and back (store/event_id.h).
#include "store/event_id.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

namespace hookrelay::store {
namespace {

constexpr uint64_t kBitsA = 0x9E3779B97F4A7C15;
constexpr uint64_t kBitsB = 0x0123456789ABCDEF;

int64_t Key(int64_t ms, int64_t seq) { return (ms << kEventKeySequenceBits) | seq; }

TEST(StoreEventIdTest, RoundTripsForEveryPartOfTheKeyAndAnyStoreBits) {
  const std::vector<uint64_t> bits = {0, 1, kBitsA, kBitsB, ~uint64_t{0}, uint64_t{1} << 63};
  const std::vector<int64_t> keys = {0, 1, Key(1'700'000'000'000, 0), Key(1'700'000'000'000, 4095),
                                     Key((int64_t{1} << 48) - 1, 4095)};
  for (uint64_t b : bits) {
    for (int64_t k : keys) {
      const std::string id = EventIdFromKey(k, b);
      ASSERT_EQ(id.size(), 26u);
      EXPECT_EQ(EventKeyFromId(id, b), k) << id;
    }
  }
}

TEST(StoreEventIdTest, TheSameKeyInTwoStoresGivesTwoIdsAndEachRefusesTheOther) {
  const int64_t k = Key(1'700'000'000'000, 0);
  const std::string a = EventIdFromKey(k, kBitsA);
  const std::string b = EventIdFromKey(k, kBitsB);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.substr(0, 10), b.substr(0, 10));  // the millisecond still leads
  EXPECT_EQ(EventKeyFromId(b, kBitsA), std::nullopt);
  EXPECT_EQ(EventKeyFromId(a, kBitsB), std::nullopt);
  // One bit different anywhere in the store's part is another store.
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_EQ(EventKeyFromId(EventIdFromKey(k, kBitsA ^ (uint64_t{1} << bit)), kBitsA),
              std::nullopt)
        << bit;
  }
}

TEST(StoreEventIdTest, IdsSortAsKeysWithinAStore) {
  const std::vector<int64_t> keys = {Key(5, 0),
                                     Key(5, 1),
                                     Key(5, 31),
                                     Key(5, 32),
                                     Key(5, 4095),
                                     Key(6, 0),
                                     Key(1'700'000'000'000, 7)};
  for (size_t i = 1; i < keys.size(); ++i) {
    EXPECT_LT(EventIdFromKey(keys[i - 1], kBitsA), EventIdFromKey(keys[i], kBitsA)) << i;
  }
}

TEST(StoreEventIdTest, RefusesWhatNoStoreMade) {
  const std::string good = EventIdFromKey(Key(1'700'000'000'000, 3), kBitsA);
  std::string lower = good;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string high = good;
  high[10] = 'Z';  // sets the 4 bits above the store's, which are always zero
  std::string too_late = good;
  too_late[0] = '8';  // past 48 bits of milliseconds
  for (const std::string& bad :
       {std::string(), std::string("nope"), good.substr(1), good + "0", lower, high, too_late,
        std::string("01JDZ8X4AC1N4G0Y5K6M7P8Q9U"), std::string(26, '0')}) {
    EXPECT_EQ(EventKeyFromId(bad, kBitsA), std::nullopt) << bad;
  }
}

TEST(StoreEventIdTest, KeyTimeIsTheKeysMillisecond) {
  const TimePoint t = FromUnixMillis(1'700'000'000'123);
  EXPECT_EQ(EventKeyTime(EventKeyFloor(t)), t);
  EXPECT_EQ(EventKeyTime(EventKeyFloor(t) + 4095), t);
  EXPECT_EQ(EventKeyTime(EventKeyFloor(t) + 4096), t + std::chrono::milliseconds(1));
}

}  // namespace
}  // namespace hookrelay::store
