#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

// `hookrelay backup` and `hookrelay restore` for the embedded store (docs/operations.md#backups).
namespace hookrelay::store {

struct BackupInfo {
  uint64_t bytes = 0;
  int schema_version = 0;
  std::string sha256_hex;     // of the file written
  std::string checksum_file;  // <file>.sha256, in `sha256sum` format
};

// A consistent copy of the store in `dir` (hookrelay.db and its WAL, as one moment) into `file`,
// taken while a server may run: SQLite's online backup API in one step under a read
// transaction, which in WAL mode never blocks the server's writes. The copy is checked
// (quick_check), written beside `file` first and renamed into place, and its SHA-256 written to
// <file>.sha256. kFailedPrecondition when `dir` holds no store or `file` exists.
Result<BackupInfo> BackupSqliteStore(const std::string& dir, const std::string& file);

// `file` (a backup) as the store of `dir`: refused (kFailedPrecondition, nothing written) when
// `dir` exists and is not empty, when <file>.sha256 exists and does not match, when `file` is
// not hookrelay's store, is damaged, or was made by a newer build (its schema is past this
// build's). `dir` is made 0700 and hookrelay.db 0600. Returns the backup's schema version.
Result<int> RestoreSqliteStore(const std::string& file, const std::string& dir);

}  // namespace hookrelay::store
