#include "common/crypto.h"

#include <gtest/gtest.h>

namespace hookrelay {
namespace {

TEST(CryptoTest, Sha256KnownAnswer) {
  EXPECT_EQ(HexEncode(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// RFC 4231 test case 2.
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
