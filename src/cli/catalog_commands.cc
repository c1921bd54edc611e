#include "cli/catalog_commands.h"

#include <boost/json.hpp>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/args.h"
#include "cli/catalog_edit.h"
#include "cli/management_command.h"
#include "cli/render.h"
#include "cli/route_commands.h"
#include "cli/terminal.h"
#include "common/list_limits.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

TimePoint Now() { return SystemClock::Instance().Now(); }

using ListRenderer = std::function<std::string(const json::array&)>;
using ItemRenderer = std::function<std::string(const json::object&)>;

// `<resource> list`: GET /api/v1/<resource>, the "items" as a table.
void AddList(Command parent, const std::string& resource, ListRenderer render, int& exit_code) {
  auto common = std::make_shared<ManagementOptions>();
  Command list = parent.Subcommand("list", "List " + resource);
  AddManagementOptions(list, *common);
  list.Callback([resource, render, common, &exit_code] {
    const std::string command = resource + " list";
    ApiClient client = MakeClient(*common);
    Result<json::value> page = client.Get("/api/v1/" + resource);
    if (!page.ok()) {
      exit_code = ReportApiError(command, page.status());
      return;
    }
    const json::value* items =
        page->is_object() ? page->get_object().if_contains("items") : nullptr;
    if (!items || !items->is_array()) {
      exit_code =
          ReportApiError(command, Status::Internal("the API answered without an \"items\" list"));
      return;
    }
    if (common->json) {
      PrintJson(*page);
    } else {
      std::cout << render(items->get_array());
    }
    exit_code = 0;
  });
}

// `<resource> show NAME`: GET /api/v1/<resource>/NAME.
void AddShow(Command parent, const std::string& resource, const std::string& what,
             ItemRenderer render, int& exit_code) {
  auto common = std::make_shared<ManagementOptions>();
  auto name = std::make_shared<std::string>();
  Command show = parent.Subcommand("show", "Show one " + what);
  show.Add("name", *name, what + " name").Required();
  AddManagementOptions(show, *common);
  show.Callback([resource, render, common, name, &exit_code] {
    const std::string command = resource + " show";
    ApiClient client = MakeClient(*common);
    exit_code =
        PrintApiObject(command, client.Get("/api/v1/" + resource + "/" + PercentEncode(*name)),
                       common->json, render);
  });
}

// `destinations <verb> NAME`: POST /api/v1/destinations/NAME/<verb>, then the destination as
// `destinations show` prints it. `pause` takes --reason.
void AddControl(Command parent, const std::string& verb, const std::string& done,
                const std::string& help, int& exit_code) {
  auto common = std::make_shared<ManagementOptions>();
  auto name = std::make_shared<std::string>();
  auto reason = std::make_shared<std::string>();
  Command cmd = parent.Subcommand(verb, help);
  cmd.Add("name", *name, "destination name").Required();
  if (verb == "pause") cmd.Add("--reason", *reason, "Why (shown with the destination)");
  AddManagementOptions(cmd, *common);
  cmd.Callback([verb, done, common, name, reason, &exit_code] {
    const std::string command = "destinations " + verb;
    json::object body;
    if (!reason->empty()) body["reason"] = *reason;
    ApiClient client = MakeClient(*common);
    exit_code = PrintApiObject(
        command, client.Post("/api/v1/destinations/" + PercentEncode(*name) + "/" + verb, body),
        common->json, [&](const json::object& destination) {
          // A no-op ("already paused", "not paused") says so instead of "Paused billing".
          const json::value* note = destination.if_contains("note");
          const std::string head =
              note && note->is_string()
                  ? *name + ": " + std::string(note->get_string()) + ", nothing changed"
                  : done + " " + *name;
          return head + "\n\n" + RenderDestinationDetail(destination, Now(), TerminalWidth());
        });
  });
}

// What differs between `destinations rotate-secret` and `sources rotate-secret`.
struct RotateSecretCommand {
  std::string resource;      // "destinations", "sources"
  std::string help;          // the command's
  std::string grace_help;    // --grace's
  std::string secret_help;   // --secret's
  std::string secret_field;  // where the answer carries the new secret
  std::string rotated;       // "the signing secret of"
  std::string give_to;       // who must get the new secret now
  ItemRenderer render;       // the object after the change
};

// `<resource> rotate-secret NAME [--grace D] [--secret S]`: POST …/rotate-secret, then the new
// secret (answered this once) and the object.
void AddRotateSecret(Command parent, RotateSecretCommand spec, int& exit_code) {
  auto common = std::make_shared<ManagementOptions>();
  auto name = std::make_shared<std::string>();
  auto grace = std::make_shared<std::string>();
  auto secret = std::make_shared<std::string>();
  Command cmd = parent.Subcommand("rotate-secret", spec.help);
  cmd.Add("name", *name, spec.resource.substr(0, spec.resource.size() - 1) + " name").Required();
  cmd.Add("--grace", *grace, spec.grace_help);
  cmd.Add("--secret", *secret, spec.secret_help);
  AddManagementOptions(cmd, *common);
  cmd.Callback([spec, common, name, grace, secret, &exit_code] {
    const std::string command = spec.resource + " rotate-secret";
    json::object body;
    if (!grace->empty()) body["grace"] = *grace;
    if (!secret->empty()) {
      auto value = ReadValueArg(*secret, "--secret");
      if (!value.ok()) throw UsageError(command, value.status().message());
      body["secret"] = *value;
    }
    ApiClient client = MakeClient(*common);
    exit_code = PrintApiObject(
        command,
        client.Post("/api/v1/" + spec.resource + "/" + PercentEncode(*name) + "/rotate-secret",
                    body),
        common->json, [&](const json::object& o) {
          std::string out = "Rotated " + spec.rotated + " " + *name + ".\n";
          if (const json::value* s = o.if_contains(spec.secret_field); s && s->is_string()) {
            out += "New secret (shown this once; give it to " + spec.give_to + " now):\n  " +
                   std::string(s->get_string()) + "\n";
          }
          return out + "\n" + spec.render(o);
        });
  });
}

// A paged list: GET `path`?limit=N[&cursor=C], printed as JSON or by `render` (given the whole
// page), then, when there is more, the --cursor that continues it.
void AddPagedList(Command cmd, const std::string& command, const std::string& what,
                  std::function<std::string()> path_of,
                  std::function<std::string(const json::object&)> render, int& exit_code) {
  struct Paging {
    int limit = kDefaultListLimit;
    std::string cursor;
    ManagementOptions common;
  };
  auto paging = std::make_shared<Paging>();
  cmd.Add("--limit", paging->limit,
          "At most this many (default " + std::to_string(kDefaultListLimit) + ", at most " +
              std::to_string(kMaxListLimit) + ")")
      .InRange(1, kMaxListLimit);
  cmd.Add("--cursor", paging->cursor,
          "Continue after an earlier page: its next_cursor (--json) or the one its table "
          "names");
  AddManagementOptions(cmd, paging->common);
  cmd.Callback([command, what, path_of, render, paging, &exit_code] {
    ApiClient client = MakeClient(paging->common);
    std::string path = path_of() + "?limit=" + std::to_string(paging->limit);
    if (!paging->cursor.empty()) path += "&cursor=" + PercentEncode(paging->cursor);
    Result<json::value> page = client.Get(path);
    if (!page.ok()) {
      exit_code = ReportApiError(command, page.status());
      return;
    }
    const json::object* o = page->if_object();
    const json::value* items = o ? o->if_contains("items") : nullptr;
    if (!items || !items->is_array()) {
      exit_code =
          ReportApiError(command, Status::Internal("the API answered without an \"items\" list"));
      return;
    }
    if (paging->common.json) {
      PrintJson(*page);
    } else {
      std::cout << render(*o);
      const json::value* next = o->if_contains("next_cursor");
      if (next && next->is_string()) {
        std::cout << RenderNextPageHint(what, std::string(next->get_string()), TerminalWidth(),
                                        /*has_filters=*/false);
      }
    }
    exit_code = 0;
  });
}

}  // namespace

void AddAuditCommand(Command app, int& exit_code) {
  Command audit = app.Subcommand("audit", "The audit trail: who changed what, and when (the API)");
  audit.RequireSubcommand();
  Command list = audit.Subcommand(
      "list", "List audit entries, newest first: pauses, replays, catalog changes, …");
  AddPagedList(
      list, "audit list", "entries", [] { return std::string("/api/v1/audit"); },
      [](const json::object& page) {
        return RenderAuditList(page.at("items").as_array(), Now(), TerminalWidth());
      },
      exit_code);
}

void AddCatalogCommands(Command app, int& exit_code) {
  Command sources = app.Subcommand(
      "sources",
      "Webhook sources: list, show, add, update, rm, rejections, rotate-secret (the API)");
  sources.RequireSubcommand();
  AddList(sources, "sources", RenderSourceList, exit_code);
  AddShow(
      sources, "sources", "source",
      [](const json::object& s) { return RenderSourceDetail(s, Now()); }, exit_code);
  {
    auto name = std::make_shared<std::string>();
    Command rejections = sources.Subcommand(
        "rejections", "List a source's requests refused for failed verification (401)");
    rejections.Add("name", *name, "source name").Required();
    AddPagedList(
        rejections, "sources rejections", "rejections",
        [name] { return "/api/v1/sources/" + PercentEncode(*name) + "/rejections"; },
        [](const json::object& page) { return RenderRejectionList(page, Now(), TerminalWidth()); },
        exit_code);
  }
  AddRotateSecret(
      sources,
      {.resource = "sources",
       .help = "Put a new verification secret in front (the current ones also verify for --grace)",
       .grace_help = "How long the current secrets still verify too (default 24h, at most 7d; 0s: "
                     "not at all)",
       .secret_help = "The new secret (@FILE or @- reads it); required for stripe and shopify, "
                      "generated by default for the others",
       .secret_field = "secret",
       .rotated = "the verification secret of",
       .give_to = "the sender",
       .render = [](const json::object& s) { return RenderSourceDetail(s, Now()); }},
      exit_code);

  Command destinations = app.Subcommand(
      "destinations",
      "Destinations: list, show, add, update, rm, pause, resume, reset-breaker, rotate-secret "
      "(the API)");
  destinations.RequireSubcommand();
  AddList(
      destinations, "destinations",
      [](const json::array& items) { return RenderDestinationList(items, Now(), TerminalWidth()); },
      exit_code);
  AddShow(
      destinations, "destinations", "destination",
      [](const json::object& d) { return RenderDestinationDetail(d, Now(), TerminalWidth()); },
      exit_code);
  AddControl(destinations, "pause", "Paused",
             "Pause a destination: deliveries are kept, nothing is sent", exit_code);
  AddControl(destinations, "resume", "Resumed",
             "Resume a paused destination: its deliveries are due now", exit_code);
  AddControl(destinations, "reset-breaker", "Reset the breaker of",
             "Close a destination's circuit breaker and send again", exit_code);
  AddRotateSecret(
      destinations,
      {.resource = "destinations",
       .help = "Give a destination a new signing secret (the old one also signs for --grace)",
       .grace_help =
           "How long the old secret still signs too (default 24h, at most 7d; 0s: not at all)",
       .secret_help = "The new secret, whsec_… (@FILE or @- reads it); default: one is generated",
       .secret_field = "signing_secret",
       .rotated = "the signing secret of",
       .give_to = "the receiver",
       .render =
           [](const json::object& d) {
             return RenderDestinationDetail(d, Now(), TerminalWidth());
           }},
      exit_code);

  Command routes = app.Subcommand("routes", "Routes from sources to destinations (the API)");
  routes.RequireSubcommand();
  AddList(
      routes, "routes",
      [](const json::array& items) { return RenderRouteList(items, TerminalWidth()); }, exit_code);
  AddShow(routes, "routes", "route", RenderRouteDetail, exit_code);

  AddCatalogEditCommands(sources, destinations, routes, exit_code);
  AddRouteCommands(routes, exit_code);
}

}  // namespace hookrelay::cli
