#include "cli/migrate_command.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/store_flags.h"
#include "common/clock.h"

namespace hookrelay::cli {

void AddMigrateCommand(Command app, int& exit_code) {
  auto flags = std::make_shared<StoreFlags>();
  auto dry_run = std::make_shared<bool>(false);
  Command cmd = app.Subcommand(
      "migrate",
      "Apply the schema migrations the store is behind this build by (--dry-run: list them)");
  AddStoreFlags(cmd, *flags);
  cmd.Flag("--dry-run", *dry_run, "List the pending migrations, change nothing");
  cmd.Callback([flags, dry_run, &exit_code] {
    Result<ResolvedStore> resolved = ResolveStore(*flags);
    if (!resolved.ok()) {
      exit_code = ReportStoreError("migrate", resolved.status());
      return;
    }
    const store::StoreAddress& address = resolved->address;
    std::error_code ec;
    if (address.kind == store::StoreAddress::Kind::kDirectory &&
        !std::filesystem::exists(std::filesystem::path(address.location) / "hookrelay.db", ec)) {
      exit_code = ReportStoreError(
          "migrate", Status::FailedPrecondition("no store in " + address.location +
                                                " yet: serve makes one at its first start"));
      return;
    }
    Result<store::MigrationPlan> plan = store::PlanMigrations(address);
    if (!plan.ok()) {
      exit_code = ReportStoreError("migrate", plan.status());
      return;
    }
    std::cout << address.display << ": schema " << plan->current << ", this build's is "
              << plan->latest << "\n";
    if (plan->current > plan->latest) {
      exit_code = ReportStoreError(
          "migrate", Status::FailedPrecondition(
                         "the store is newer than this build: run a newer hookrelay on it"));
      return;
    }
    if (plan->pending.empty()) {
      std::cout << "Up to date: nothing to apply.\n";
      exit_code = 0;
      return;
    }
    std::cout << (*dry_run ? "Would apply:\n" : "Applying:\n");
    for (const auto& step : plan->pending) {
      std::cout << "  " << step.version << "  " << step.description << "\n";
    }
    if (*dry_run) {
      exit_code = 0;
      return;
    }
    std::cout.flush();
    // Opening migrates (the embedded store takes its directory's lock: a running server there is
    // named, and migrates by itself at its next start anyway).
    store::OpenStoreOptions options;
    options.migrate_postgres = true;
    Result<std::unique_ptr<store::Store>> opened =
        store::OpenStore(address, SystemClock::Instance(), options);
    if (!opened.ok()) {
      exit_code = ReportStoreError("migrate", opened.status());
      return;
    }
    opened->reset();
    std::cout << "Done: schema " << plan->latest << ".\n";
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
