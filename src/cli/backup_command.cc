#include "cli/backup_command.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/store_flags.h"
#include "common/units.h"
#include "store/sqlite/backup.h"

namespace hookrelay::cli {

namespace {

constexpr const char* kPostgresAdvice =
    "the store is PostgreSQL: back it up with pg_dump or base backups "
    "(docs/operations.md#backups), not with this command";

}  // namespace

void AddBackupCommands(Command app, int& exit_code) {
  {
    auto file = std::make_shared<std::string>();
    auto flags = std::make_shared<StoreFlags>();
    Command cmd = app.Subcommand(
        "backup",
        "Copy the embedded store consistently into FILE while the server runs (with FILE.sha256)");
    cmd.Add("file", *file, "The backup file to write (must not exist)").Required();
    AddStoreFlags(cmd, *flags);
    cmd.Callback([file, flags, &exit_code] {
      Result<ResolvedStore> resolved = ResolveStore(*flags);
      if (!resolved.ok()) {
        exit_code = ReportStoreError("backup", resolved.status());
        return;
      }
      if (resolved->address.kind == store::StoreAddress::Kind::kPostgres) {
        exit_code = ReportStoreError("backup", Status::FailedPrecondition(kPostgresAdvice));
        return;
      }
      const std::string dir = resolved->address.location;
      const auto start = std::chrono::steady_clock::now();
      Result<store::BackupInfo> info = store::BackupSqliteStore(dir, *file);
      if (!info.ok()) {
        exit_code = ReportStoreError("backup", info.status());
        return;
      }
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      std::cout << "Backed up " << dir << " to " << *file << " (" << FormatByteSize(info->bytes)
                << ", schema " << info->schema_version << ") in " << ms << " ms.\n"
                << "SHA-256 " << info->sha256_hex << " in " << info->checksum_file << ".\n"
                << "The master key is not in the backup (the secrets in it are encrypted): keep\n"
                << "the key (" << (std::filesystem::path(dir) / "master.key").string()
                << ", or your [store] master_key_file) to restore it.\n";
      exit_code = 0;
    });
  }
  {
    auto file = std::make_shared<std::string>();
    auto data = std::make_shared<std::string>();
    Command cmd = app.Subcommand(
        "restore", "Make a backup the store of a new data directory (the server stopped)");
    cmd.Add("file", *file, "The backup file (checked against FILE.sha256 when it exists)")
        .Required();
    cmd.Add("--data", *data, "The new data directory (must not exist, or be empty)").Required();
    cmd.Callback([file, data, &exit_code] {
      Result<int> version = store::RestoreSqliteStore(*file, *data);
      if (!version.ok()) {
        exit_code = ReportStoreError("restore", version.status());
        return;
      }
      std::cout << "Restored " << *file << " (schema " << *version << ") into " << *data
                << ".\nStart it with `hookrelay serve --data " << *data
                << "` and the master key the store was\n"
                   "made with (HOOKRELAY_MASTER_KEY or [store] master_key_file). Events "
                   "acknowledged\nafter the backup are not in it.\n";
      exit_code = 0;
    });
  }
}

}  // namespace hookrelay::cli
