#include "secrets/keyring.h"

#include <algorithm>

#include "common/crypto.h"
#include "secrets/cipher.h"

namespace hookrelay::secrets {

namespace {

constexpr std::string_view kPrefix = "enc:v1:";

// A wrapped data key opens only as the data key of the row of that master key.
std::string WrapContext(const std::string& master_key_id) {
  return "hookrelay data key\n" + master_key_id;
}

store::WrappedDataKey Wrap(const std::string& data_key, const MasterKey& master, TimePoint now) {
  return {master.id, Base64Encode(Seal(master.bytes, data_key, WrapContext(master.id))), now};
}

Status Mismatch(const std::string& detail) {
  return Status::FailedPrecondition(
      "master key does not match the store: " + detail +
      ". Give every node a master key that opens the store (HOOKRELAY_MASTER_KEY or [store] "
      "master_key_file; docs/secrets.md)");
}

}  // namespace

Result<Keyring> Keyring::Unlock(store::KeyStore& store, const MasterKey& master,
                                const Clock& clock) {
  HR_ASSIGN_OR_RETURN(std::vector<store::WrappedDataKey> rows, store.ListDataKeys());
  if (rows.empty()) {
    // The first start: a new data key. Another node starting now may have made one first; then
    // its row is read back below and this one is dropped.
    const store::WrappedDataKey fresh = Wrap(RandomBytes(kKeyBytes), master, clock.Now());
    HR_RETURN_IF_ERROR(store.AddDataKey(fresh, /*only_if_none=*/true).status());
    HR_ASSIGN_OR_RETURN(rows, store.ListDataKeys());
  }
  auto it = std::find_if(rows.begin(), rows.end(), [&master](const store::WrappedDataKey& r) {
    return r.master_key_id == master.id;
  });
  if (it == rows.end()) {
    std::string ids;
    for (const store::WrappedDataKey& r : rows) ids += (ids.empty() ? "" : ", ") + r.master_key_id;
    return Mismatch("this node's master key is " + master.id + ", the store opens with " + ids);
  }
  std::optional<std::string> sealed = Base64Decode(it->wrapped);
  Result<std::string> data_key =
      sealed ? Open(master.bytes, *sealed, WrapContext(master.id))
             : Result<std::string>(Status::FailedPrecondition("not base64"));
  if (!data_key.ok() || data_key->size() != kKeyBytes) {
    return Mismatch("the store's data key for master key " + master.id +
                    " does not open with it (changed in the store?)");
  }
  return Keyring(std::move(*data_key), master.id);
}

std::string Keyring::Encrypt(std::string_view plaintext, std::string_view context) const {
  return std::string(kPrefix) + Base64Encode(Seal(data_key_, plaintext, context));
}

Result<std::string> Keyring::Decrypt(std::string_view stored, std::string_view context) const {
  if (!IsEncrypted(stored)) return Status::FailedPrecondition("not an encrypted value");
  std::optional<std::string> sealed = Base64Decode(stored.substr(kPrefix.size()));
  if (!sealed) return Status::FailedPrecondition("an encrypted value that is not base64");
  return Open(data_key_, *sealed, context);
}

bool Keyring::IsEncrypted(std::string_view stored) { return stored.starts_with(kPrefix); }

Result<bool> Keyring::AddMasterKey(store::KeyStore& store, const MasterKey& another,
                                   const Clock& clock) const {
  return store.AddDataKey(Wrap(data_key_, another, clock.Now()), /*only_if_none=*/false);
}

}  // namespace hookrelay::secrets
