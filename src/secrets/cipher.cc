#include "secrets/cipher.h"

#include <openssl/evp.h>

#include <memory>

#include "common/crypto.h"

namespace hookrelay::secrets {

namespace {

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

}  // namespace

std::string Seal(std::string_view key, std::string_view plaintext, std::string_view context) {
  if (key.size() != kKeyBytes) return {};  // a programming error; Open then refuses it
  const std::string nonce = RandomBytes(kNonceBytes);
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  out.replace(0, kNonceBytes, nonce);
  Ctx ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  int done = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) != 1 ||
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, Bytes(context),
                        static_cast<int>(context.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), Bytes(out) + kNonceBytes, &len, Bytes(plaintext),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), Bytes(out) + kNonceBytes + len, &done) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                          Bytes(out) + kNonceBytes + plaintext.size()) != 1) {
    return {};
  }
  return out;
}

Result<std::string> Open(std::string_view key, std::string_view sealed, std::string_view context) {
  if (key.size() != kKeyBytes || sealed.size() < kNonceBytes + kTagBytes) {
    return Status::FailedPrecondition("not an encrypted value");
  }
  const std::string_view nonce = sealed.substr(0, kNonceBytes);
  const std::string_view body = sealed.substr(kNonceBytes, sealed.size() - kNonceBytes - kTagBytes);
  std::string tag(sealed.substr(sealed.size() - kTagBytes));
  std::string out(body.size(), '\0');
  Ctx ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  int done = 0;
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) != 1 ||
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, Bytes(context),
                        static_cast<int>(context.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), Bytes(out), &len, Bytes(body), static_cast<int>(body.size())) !=
          1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, Bytes(tag)) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), Bytes(out) + len, &done) != 1) {
    return Status::FailedPrecondition(
        "the value does not open with this key (wrong key, or changed)");
  }
  return out;
}

}  // namespace hookrelay::secrets
