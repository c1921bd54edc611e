#include "cli/route_commands.h"

#include <boost/json.hpp>
#include <iostream>
#include <memory>

#include "cli/api_client.h"
#include "cli/catalog_edit.h"
#include "cli/management_command.h"
#include "cli/render.h"
#include "cli/terminal.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

void AddRuleFlags(Command cmd, RouteRuleFlags& f) {
  cmd.Add("--types", f.types,
          "Event types it takes: names and prefixes ending in * ('invoice.*'); repeat or "
          "separate with commas")
      .OneValueEach();
  cmd.Add("--filter", f.filter,
          "A filter on the event's headers and JSON body (docs/routing.md), as JSON or @FILE");
}

}  // namespace

Status AddRuleFields(const RouteRuleFlags& flags, json::object& body) {
  if (!flags.types.empty()) {
    json::array types;
    for (const std::string& given : flags.types) {
      size_t start = 0;
      while (start <= given.size()) {
        const size_t comma = given.find(',', start);
        const std::string t =
            given.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!t.empty()) types.emplace_back(t);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    body["types"] = std::move(types);
  } else if (flags.all_types) {
    body["types"] = nullptr;
  }
  if (!flags.filter.empty()) {
    HR_ASSIGN_OR_RETURN(std::string text, ReadValueArg(flags.filter, "--filter"));
    boost::system::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec) return Status::InvalidArgument("--filter: not JSON: " + ec.message(), "--filter");
    if (!v.is_object()) {
      return Status::InvalidArgument("--filter: must be a JSON object", "--filter");
    }
    body["filter"] = std::move(v);
  } else if (flags.no_filter) {
    body["filter"] = nullptr;
  }
  return Status::Ok();
}

void AddRouteCommands(Command routes, int& exit_code) {
  {  // routes add SOURCE DESTINATION [--id ID] [--types …] [--filter …]
    auto common = std::make_shared<ManagementOptions>();
    auto source = std::make_shared<std::string>();
    auto destination = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto rule = std::make_shared<RouteRuleFlags>();
    Command cmd =
        routes.Subcommand("add",
                          "Send the events of a source to a destination (all, or those --types and "
                          "--filter take)");
    cmd.Add("source", *source, "source name").Required();
    cmd.Add("destination", *destination, "destination name").Required();
    cmd.Add("--id", *id, "Route id (default SOURCE:DESTINATION)");
    AddRuleFlags(cmd, *rule);
    AddManagementOptions(cmd, *common);
    cmd.Callback([=, &exit_code] {
      ApiClient client = MakeClient(*common);
      json::object body{{"source", *source}, {"destination", *destination}};
      if (!id->empty()) body["id"] = *id;
      if (Status s = AddRuleFields(*rule, body); !s.ok()) throw UsageError(s.message());
      exit_code = PrintApiObject(
          "routes add", client.Post("/api/v1/routes", body), common->json,
          [](const json::object& r) { return "Created route\n\n" + RenderRouteDetail(r); });
    });
  }
  {  // routes update ID [--types … | --all-types] [--filter … | --no-filter]
    auto common = std::make_shared<ManagementOptions>();
    auto id = std::make_shared<std::string>();
    auto rule = std::make_shared<RouteRuleFlags>();
    Command cmd =
        routes.Subcommand("update", "Change which events a route created through the API takes");
    cmd.Add("id", *id, "route id").Required();
    AddRuleFlags(cmd, *rule);
    cmd.Flag("--all-types", rule->all_types, "Drop its types: it takes every type again");
    cmd.Flag("--no-filter", rule->no_filter, "Drop its filter");
    AddManagementOptions(cmd, *common);
    cmd.Callback([=, &exit_code] {
      ApiClient client = MakeClient(*common);
      if ((rule->all_types && !rule->types.empty()) || (rule->no_filter && !rule->filter.empty())) {
        throw UsageError("give --types or --all-types, --filter or --no-filter, not both");
      }
      json::object body;
      if (Status s = AddRuleFields(*rule, body); !s.ok()) throw UsageError(s.message());
      if (body.empty()) {
        throw UsageError("nothing to change: give --types, --all-types, --filter or --no-filter");
      }
      exit_code = PrintApiObject(
          "routes update", client.Patch("/api/v1/routes/" + PercentEncode(*id), body), common->json,
          [](const json::object& r) { return "Updated route\n\n" + RenderRouteDetail(r); });
    });
  }
  {  // routes test SOURCE [--types …] [--filter …] [--event ID | --last N]
    auto common = std::make_shared<ManagementOptions>();
    auto source = std::make_shared<std::string>();
    auto event = std::make_shared<std::string>();
    auto last = std::make_shared<int>(20);
    auto rule = std::make_shared<RouteRuleFlags>();
    Command cmd = routes.Subcommand(
        "test", "Try types and a filter on a source's stored events, without changing anything");
    cmd.Add("source", *source, "source name").Required();
    AddRuleFlags(cmd, *rule);
    Option ev = cmd.Add("--event", *event, "Try it on this event only");
    Option n = cmd.Add("--last", *last, "Try it on the source's last N events (default 20)")
                   .InRange(1, 100);
    ev.Excludes(n);
    AddManagementOptions(cmd, *common);
    cmd.Callback([=, &exit_code] {
      ApiClient client = MakeClient(*common);
      json::object body{{"source", *source}};
      if (Status s = AddRuleFields(*rule, body); !s.ok()) throw UsageError(s.message());
      if (!event->empty()) {
        body["event"] = *event;
      } else {
        body["last"] = *last;
      }
      Result<json::value> answer = client.Post("/api/v1/routes/test", body);
      if (!answer.ok()) {
        exit_code = ReportApiError("routes test", answer.status());
        return;
      }
      if (common->json) {
        PrintJson(*answer);
      } else if (answer->is_object()) {
        std::cout << RenderRouteTest(answer->get_object(), TerminalWidth());
      }
      exit_code = 0;
    });
  }
}

}  // namespace hookrelay::cli
