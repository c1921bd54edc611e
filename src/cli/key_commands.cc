#include "cli/key_commands.h"

#include <boost/json.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/management_command.h"
#include "cli/render.h"
#include "common/file_text.h"
#include "secrets/master_key.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

TimePoint Now() { return SystemClock::Instance().Now(); }

}  // namespace

void AddKeyCommands(Command app, int& exit_code) {
  Command keys = app.Subcommand(
      "keys", "The master keys that open the stored secrets (docs/secrets.md): list, rotate");
  keys.RequireSubcommand();
  {
    auto common = std::make_shared<ManagementOptions>();
    Command list = keys.Subcommand("list", "List the master keys that open the store, by id");
    AddManagementOptions(list, *common);
    list.Callback([common, &exit_code] {
      ApiClient client = MakeClient(*common);
      exit_code =
          PrintApiList("keys list", client.Get("/api/v1/keys"), common->json,
                       [](const json::array& items) { return RenderKeyList(items, Now()); });
    });
  }
  {
    auto common = std::make_shared<ManagementOptions>();
    auto file = std::make_shared<std::string>();
    Command rotate = keys.Subcommand(
        "rotate",
        "Let a new master key open the store too (made into FILE, mode 0600, when FILE does "
        "not exist); the old key works until it is retired");
    rotate.Add("--new-key-file", *file, "The new master key's file (32 bytes in base64)")
        .Required();
    AddManagementOptions(rotate, *common);
    rotate.Callback([common, file, &exit_code] {
      std::error_code ec;
      const bool made = !std::filesystem::exists(*file, ec);
      if (made) {
        if (Status s = WritePrivateFile(*file, secrets::NewMasterKeyText() + "\n"); !s.ok()) {
          exit_code = ReportApiError("keys rotate", s);
          return;
        }
      }
      Result<std::string> text = ReadFileText(*file);
      if (!text.ok()) {
        exit_code = ReportApiError("keys rotate", text.status());
        return;
      }
      auto key = secrets::ParseMasterKey(*text, *file);
      if (!key.ok()) {
        exit_code = ReportApiError("keys rotate", key.status());
        return;
      }
      ApiClient client = MakeClient(*common);
      exit_code = PrintApiObject(
          "keys rotate", client.Post("/api/v1/keys", json::object{{"master_key", *text}}),
          common->json, [&](const json::object& k) {
            const json::value* id = k.if_contains("id");
            const std::string new_id =
                id && id->is_string() ? std::string(id->get_string()) : key->id;
            return std::string(made ? "Made a new master key in " + *file + " (mode 0600).\n"
                                    : "") +
                   "Master key " + new_id + " now opens the store too; the old key still works.\n" +
                   "Next:\n"
                   "  1. on every node, set [store] master_key_file = \"" +
                   *file + "\"\n" +
                   "     (or HOOKRELAY_MASTER_KEY to its text) and restart the nodes one at a "
                   "time;\n"
                   "  2. retire the old key: hookrelay keys list, then hookrelay keys retire ID\n";
          });
    });
  }
  {
    auto common = std::make_shared<ManagementOptions>();
    auto id = std::make_shared<std::string>();
    Command retire = keys.Subcommand(
        "retire", "Stop a master key opening the store (the end of a rotation; never the last)");
    retire.Add("id", *id, "the key's id (hookrelay keys list)").Required();
    AddManagementOptions(retire, *common);
    retire.Callback([common, id, &exit_code] {
      ApiClient client = MakeClient(*common);
      exit_code =
          PrintApiObject("keys retire", client.Delete("/api/v1/keys/" + PercentEncode(*id)),
                         common->json, [&](const json::object&) {
                           return "Retired master key " + *id + ": it no longer opens the store.\n";
                         });
    });
  }
}

}  // namespace hookrelay::cli
