// Secrets at rest (issue 28, docs/secrets.md): what is sealed opens only with its key and context;
// master keys parse with errors that say what is wrong; the data key is made once, opened again
// by its master key, refused to any other, and wrapped by a second key during a rotation; the
// catalog is written encrypted and read back in plain text, and a store in plain text is
// encrypted in place. On a real SQLite store.
#include <gtest/gtest.h>

#include "common/crypto.h"
#include "secrets/cipher.h"
#include "secrets/encrypting_store.h"
#include "secrets/keyring.h"
#include "secrets/master_key.h"
#include "store/sqlite/open.h"
#include "support/process.h"

namespace hookrelay::secrets {
namespace {

MasterKey Key(char fill) {
  auto k = ParseMasterKey(Base64Encode(std::string(kKeyBytes, fill)), "test");
  EXPECT_TRUE(k.ok());
  return k.ok() ? *k : MasterKey{};
}

TEST(CipherTest, WhatIsSealedOpensOnlyWithItsKeyAndContext) {
  const std::string key(kKeyBytes, 'k');
  const std::string sealed = Seal(key, "whsec_secret", "catalog\ndestination\nd");
  ASSERT_EQ(sealed.size(), kNonceBytes + 12 + kTagBytes);
  EXPECT_EQ(sealed.find("whsec_secret"), std::string::npos);
  EXPECT_NE(sealed, Seal(key, "whsec_secret", "catalog\ndestination\nd")) << "a fresh nonce";
  auto opened = Open(key, sealed, "catalog\ndestination\nd");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, "whsec_secret");
  EXPECT_FALSE(Open(std::string(kKeyBytes, 'x'), sealed, "catalog\ndestination\nd").ok());
  EXPECT_FALSE(Open(key, sealed, "catalog\ndestination\ne").ok()) << "moved to another object";
  std::string changed = sealed;
  changed[kNonceBytes] ^= 1;
  EXPECT_FALSE(Open(key, changed, "catalog\ndestination\nd").ok());
  EXPECT_FALSE(Open(key, sealed.substr(0, 20), "catalog\ndestination\nd").ok());
  auto empty = Open(key, Seal(key, "", "c"), "c");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST(MasterKeyTest, ParsesBase64Of32BytesAndSaysWhatIsWrong) {
  const std::string text = NewMasterKeyText();
  auto k = ParseMasterKey("  " + text + "\n", "HOOKRELAY_MASTER_KEY");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(k->bytes.size(), kKeyBytes);
  EXPECT_EQ(k->id.size(), 16u);
  EXPECT_EQ(k->id, ParseMasterKey(text, "x")->id) << "the same key, the same id";
  EXPECT_NE(k->id, Key('a').id);
  EXPECT_EQ(k->id.find(HexEncode(k->bytes).substr(0, 8)), std::string::npos);
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"", "is empty"},
           {"   \n", "is empty"},
           {"not base64!", "is not base64"},
           {Base64Encode("short"),
            "must be 32 bytes in base64 (openssl rand -base64 32), not 5"}}) {
    auto r = ParseMasterKey(bad, "HOOKRELAY_MASTER_KEY");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind("HOOKRELAY_MASTER_KEY: " + says, 0), 0u)
        << bad << ": " << r.status().message();
  }
}

class KeyringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(KeyringTest, TheDataKeyIsMadeOnceAndOpensOnlyWithItsMasterKeys) {
  auto first = Keyring::Unlock(*store_, Key('a'), clock_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->master_key_id(), Key('a').id);
  const std::string stored = first->Encrypt("whsec_x", "ctx");
  EXPECT_TRUE(Keyring::IsEncrypted(stored));
  EXPECT_FALSE(Keyring::IsEncrypted("{\"name\":\"d\"}"));

  auto again = Keyring::Unlock(*store_, Key('a'), clock_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again->Decrypt(stored, "ctx"), "whsec_x") << "the same data key";
  EXPECT_FALSE(again->Decrypt(stored, "other").ok());

  auto wrong = Keyring::Unlock(*store_, Key('b'), clock_);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(wrong.status().message().find("master key does not match the store"), std::string::npos)
      << wrong.status().message();
  EXPECT_NE(wrong.status().message().find(Key('a').id), std::string::npos);
  ASSERT_EQ(store_->ListDataKeys()->size(), 1u) << "a wrong key makes no data key";

  // A rotation: the data key wrapped by b too; both open it, the same data key.
  ASSERT_TRUE(*first->AddMasterKey(*store_, Key('b'), clock_));
  EXPECT_FALSE(*first->AddMasterKey(*store_, Key('b'), clock_)) << "once";
  auto by_b = Keyring::Unlock(*store_, Key('b'), clock_);
  ASSERT_TRUE(by_b.ok()) << by_b.status().ToString();
  EXPECT_EQ(*by_b->Decrypt(stored, "ctx"), "whsec_x");
  // The old key retired: b alone; never the last one.
  ASSERT_TRUE(*store_->DeleteDataKey(Key('a').id));
  EXPECT_FALSE(Keyring::Unlock(*store_, Key('a'), clock_).ok());
  EXPECT_EQ(store_->DeleteDataKey(Key('b').id).status().code(), Status::Code::kFailedPrecondition);
  EXPECT_FALSE(*store_->DeleteDataKey("no-such-key"));
}

TEST_F(KeyringTest, AWrappedKeyChangedInTheStoreIsRefused) {
  ASSERT_TRUE(Keyring::Unlock(*store_, Key('a'), clock_).ok());
  // Another row under a's id, wrapped by another key: a's id matches, the wrap does not open.
  auto rows = store_->ListDataKeys();
  ASSERT_TRUE(rows.ok());
  auto other = ParseMasterKey(Base64Encode(std::string(kKeyBytes, 'z')), "x");
  ASSERT_TRUE(other.ok());
  auto other_store = store::OpenSqliteStore({.dir = dir_.path() + "/2"}, clock_);
  ASSERT_TRUE(other_store.ok());
  auto z = Keyring::Unlock(**other_store, *other, clock_);
  ASSERT_TRUE(z.ok());
  store::WrappedDataKey forged = (*(*other_store)->ListDataKeys())[0];
  forged.master_key_id = Key('b').id;
  ASSERT_TRUE(*store_->AddDataKey(forged, false));
  auto r = Keyring::Unlock(*store_, Key('b'), clock_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not open with it"), std::string::npos)
      << r.status().message();
}

TEST_F(KeyringTest, TheCatalogIsWrittenEncryptedAndAStoreInPlainTextIsEncryptedInPlace) {
  store::Store* raw = store_.get();
  // Written in plain text first, as before encryption.
  store::CatalogChange before;
  before.put.push_back(
      {store::CatalogKind::kDestination, "d", R"({"signing_secret":"whsec_old"})", "api"});
  ASSERT_TRUE(raw->ApplyCatalogChange(before).ok());
  auto keyring = Keyring::Unlock(*raw, Key('a'), clock_);
  ASSERT_TRUE(keyring.ok());
  EncryptingStore enc(std::move(store_), std::move(*keyring));
  EXPECT_EQ((*enc.ListCatalog())[0].spec, R"({"signing_secret":"whsec_old"})")
      << "read as it is until encrypted";
  auto n = enc.EncryptExisting();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(*enc.EncryptExisting(), 0);

  store::CatalogChange add;
  add.put.push_back({store::CatalogKind::kSource, "s", R"({"secrets":["gh-secret"]})", "api"});
  ASSERT_TRUE(enc.ApplyCatalogChange(add).ok());
  auto plain = enc.ListCatalog();
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(plain->size(), 2u);
  EXPECT_EQ((*plain)[0].spec, R"({"signing_secret":"whsec_old"})");
  EXPECT_EQ((*plain)[1].spec, R"({"secrets":["gh-secret"]})");
  auto stored = enc.target().ListCatalog();
  ASSERT_TRUE(stored.ok());
  for (const store::CatalogObject& o : *stored) {
    EXPECT_TRUE(Keyring::IsEncrypted(o.spec)) << o.name << ": " << o.spec;
    EXPECT_EQ(o.spec.find("secret"), std::string::npos) << o.spec;
  }
  // A spec moved to another object's row does not open there.
  store::CatalogChange swap;
  swap.put.push_back({store::CatalogKind::kSource, "t", (*stored)[1].spec, "api"});
  ASSERT_TRUE(enc.target().ApplyCatalogChange(swap).ok());
  auto bad = enc.ListCatalog();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the stored source \"t\" does not decrypt"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace hookrelay::secrets
