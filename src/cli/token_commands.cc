#include "cli/token_commands.h"

#include <boost/json.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/management_command.h"
#include "cli/render.h"
#include "cli/terminal.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

TimePoint Now() { return SystemClock::Instance().Now(); }

}  // namespace

void AddTokenCommands(Command app, int& exit_code) {
  Command tokens =
      app.Subcommand("tokens", "Named API tokens with roles: create, list, revoke (the API)");
  tokens.RequireSubcommand();
  {
    auto common = std::make_shared<ManagementOptions>();
    auto name = std::make_shared<std::string>();
    auto role = std::make_shared<std::string>();
    auto expires = std::make_shared<std::string>();
    auto sources = std::make_shared<std::vector<std::string>>();
    auto destinations = std::make_shared<std::vector<std::string>>();
    Command create =
        tokens.Subcommand("create",
                          "Create a token (printed once): viewer reads, operator also replays and "
                          "pauses, admin does everything");
    create.Add("name", *name, "token name: a-z, 0-9, '.', '_', '-'").Required();
    create.Add("--role", *role, "viewer, operator or admin").Required();
    create.Add("--expires", *expires,
               "It stops working after this long, e.g. 90d (default: never)");
    create.Add("--source", *sources,
               "Scope it to this source (repeatable): it sees and acts on the sources and "
               "destinations given alone");
    create.Add("--destination", *destinations, "Scope it to this destination (repeatable)");
    AddManagementOptions(create, *common);
    create.Callback([common, name, role, expires, sources, destinations, &exit_code] {
      json::object body{{"name", *name}, {"role", *role}};
      if (!expires->empty()) body["expires"] = *expires;
      if (!sources->empty() || !destinations->empty()) {
        body["scope"] =
            json::object{{"sources", json::array(sources->begin(), sources->end())},
                         {"destinations", json::array(destinations->begin(), destinations->end())}};
      }
      ApiClient client = MakeClient(*common);
      exit_code =
          PrintApiObject("tokens create", client.Post("/api/v1/tokens", body), common->json,
                         [&](const json::object& t) {
                           std::string out = "Created token " + *name + ".\n";
                           if (const json::value* v = t.if_contains("token"); v && v->is_string()) {
                             out += "Token (shown this once; keep it secret):\n  " +
                                    std::string(v->get_string()) + "\n";
                           }
                           return out + "\n" + RenderTokenDetail(t, Now());
                         });
    });
  }
  {
    auto common = std::make_shared<ManagementOptions>();
    Command list = tokens.Subcommand("list", "List the tokens (never the tokens themselves)");
    AddManagementOptions(list, *common);
    list.Callback([common, &exit_code] {
      ApiClient client = MakeClient(*common);
      exit_code = PrintApiList(
          "tokens list", client.Get("/api/v1/tokens"), common->json,
          [](const json::array& items) { return RenderTokenList(items, Now(), TerminalWidth()); });
    });
  }
  {
    auto common = std::make_shared<ManagementOptions>();
    auto name = std::make_shared<std::string>();
    Command revoke = tokens.Subcommand(
        "revoke", "Revoke a token at once, on every node (bootstrap: once another admin exists)");
    revoke.Add("name", *name, "token name").Required();
    AddManagementOptions(revoke, *common);
    revoke.Callback([common, name, &exit_code] {
      ApiClient client = MakeClient(*common);
      exit_code = PrintApiObject(
          "tokens revoke", client.Delete("/api/v1/tokens/" + PercentEncode(*name)), common->json,
          [&](const json::object&) { return "Revoked token " + *name + ".\n"; });
    });
  }
}

}  // namespace hookrelay::cli
