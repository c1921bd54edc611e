#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::store {

// The data key the stored secrets are encrypted under (docs/secrets.md), as the store keeps it:
// wrapped (encrypted) by a master key, once per master key that may open the store. The store
// never sees the data key or a master key, only these rows.
struct WrappedDataKey {
  std::string master_key_id;  // which master key wraps it (secrets::MasterKey::id)
  std::string wrapped;        // base64 of AES-256-GCM(master key, data key)
  TimePoint created_at{};
  bool operator==(const WrappedDataKey&) const = default;
};

// A role of Store (store.h): the wrapped data keys (table data_keys in both stores).
class KeyStore {
 public:
  virtual ~KeyStore() = default;

  // Every row, oldest first.
  virtual Result<std::vector<WrappedDataKey>> ListDataKeys() = 0;
  // Adds `key` if no row has its master_key_id and, with `only_if_none`, only if the table is
  // empty (the first node to start makes the data key; a second one starting at the same time
  // reads the first's). Returns whether it added.
  virtual Result<bool> AddDataKey(const WrappedDataKey& key, bool only_if_none) = 0;
  // Deletes the row of `master_key_id`; returns whether there was one. Never the last row:
  // kFailedPrecondition then (the data key would be lost), checked in the delete's transaction.
  virtual Result<bool> DeleteDataKey(const std::string& master_key_id) = 0;
  // After secrets were written again encrypted (secrets::EncryptingStore::EncryptExisting): lets
  // the store drop the old copies it may still hold outside the live rows (SQLite: free pages
  // and the write-ahead log; PostgreSQL: dead row versions of the catalog table).
  virtual Status EraseOldCopies() = 0;
};

}  // namespace hookrelay::store
