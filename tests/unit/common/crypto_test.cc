#include "common/crypto.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace hookrelay {
namespace {

TEST(CryptoTest, Sha256KnownAnswer) {
  EXPECT_EQ(HexEncode(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// RFC 4231 test case 2.
// The parts are MACed as their concatenation; the per-thread context is re-keyed each time, so
// a key never leaks into the next MAC, on this thread or another.
TEST(CryptoTest, HmacSha256PartsIsTheMacOfTheConcatenation) {
  auto parts_mac = [](std::string_view key, std::initializer_list<std::string_view> parts) {
    unsigned char out[32];
    HmacSha256Parts(key, parts, out);
    return std::string(reinterpret_cast<const char*>(out), sizeof out);
  };
  EXPECT_EQ(HexEncode(parts_mac("Jefe", {"what do ya ", "want for nothing?"})),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const std::string body(100000, 'b');
  const std::string long_key(200, 'k');  // longer than the block: hashed first
  for (const std::string& key : {std::string("k1"), long_key, std::string(), std::string("k1")}) {
    EXPECT_EQ(parts_mac(key, {"evt_1", ".", "1614265330", ".", body}),
              HmacSha256(key, "evt_1.1614265330." + body));
    EXPECT_EQ(parts_mac(key, {}), HmacSha256(key, ""));
    EXPECT_EQ(parts_mac(key, {"", "x", ""}), HmacSha256(key, "x"));
  }
  std::string other;
  std::thread([&] { other = parts_mac("k2", {"a", "b"}); }).join();
  EXPECT_EQ(other, HmacSha256("k2", "ab"));
  EXPECT_EQ(parts_mac("k1", {"a", "b"}), HmacSha256("k1", "ab"));
}

TEST(CryptoTest, HmacSha256Rfc4231) {
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(CryptoTest, Base64RoundTripAndRejects) {
  for (std::string s : {std::string(""), std::string("f"), std::string("fo"), std::string("foo"),
                        std::string("\0\1\2\xff", 4)}) {
    EXPECT_EQ(*Base64Decode(Base64Encode(s)), s);
  }
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(*Base64Decode("Zm9vYg"), "foob");
  EXPECT_FALSE(Base64Decode("Zm9v!g==").has_value());
}

TEST(CryptoTest, HexRoundTrip) {
  EXPECT_EQ(*HexDecode("00ff10"), std::string("\0\xff\x10", 3));
  EXPECT_EQ(HexEncode(std::string("\0\xff\x10", 3)), "00ff10");
  EXPECT_FALSE(HexDecode("abc").has_value());
  EXPECT_FALSE(HexDecode("zz").has_value());
}

TEST(CryptoTest, ConstantTimeEqualAndTokens) {
  EXPECT_TRUE(ConstantTimeEqual("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abcd"));
  std::string a = RandomHexToken(32), b = RandomHexToken(32);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace hookrelay
