#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace hookrelay {
namespace {

std::string Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(md, key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

}  // namespace

std::string Sha256(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  return Hmac(EVP_sha256(), key, data);
}
void HmacSha256Parts(std::string_view key, std::initializer_list<std::string_view> parts,
                     unsigned char (&out)[32]) {
  struct FreeCtx {
    void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
  };
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  thread_local std::unique_ptr<EVP_MAC_CTX, FreeCtx> ctx = [] {
    std::unique_ptr<EVP_MAC_CTX, FreeCtx> c(mac != nullptr ? EVP_MAC_CTX_new(mac) : nullptr);
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                                 OSSL_PARAM_construct_end()};
    if (c != nullptr && EVP_MAC_CTX_set_params(c.get(), params) != 1) c.reset();
    return c;
  }();
  size_t len = 0;
  bool ok =
      ctx != nullptr && EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(key.data()),
                                     key.size(), nullptr) == 1;
  for (std::string_view p : parts) {
    ok = ok &&
         EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(p.data()), p.size()) == 1;
  }
  ok = ok && EVP_MAC_final(ctx.get(), out, &len, sizeof out) == 1 && len == sizeof out;
  if (!ok) {  // the one-shot path, with the parts copied together
    std::string data;
    for (std::string_view p : parts) data.append(p);
    const std::string mac_bytes = HmacSha256(key, data);
    std::copy_n(mac_bytes.begin(), std::min(mac_bytes.size(), sizeof out), out);
  }
}

std::string HmacSha1(std::string_view key, std::string_view data) {
  return Hmac(EVP_sha1(), key, data);
}
std::string HmacSha512(std::string_view key, std::string_view data) {
  return Hmac(EVP_sha512(), key, data);
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::optional<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string padded(text);
  while (padded.size() % 4) padded.push_back('=');
  for (char c : padded) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '=';
    if (!ok) return std::nullopt;
  }
  std::string out(padded.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(padded.data()),
                          static_cast<int>(padded.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts padding as zero bytes; drop them.
  size_t pad = 0;
  for (size_t i = padded.size(); i > 0 && padded[i - 1] == '='; --i) ++pad;
  if (pad > 2) return std::nullopt;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string RandomBytes(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("RAND_bytes failed");
  }
  return raw;
}

std::string RandomHexToken(size_t bytes) { return HexEncode(RandomBytes(bytes)); }

}  // namespace hookrelay
