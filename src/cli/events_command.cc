#include "cli/events_command.h"

#include <algorithm>
#include <boost/json.hpp>
#include <iostream>
#include <memory>

#include "cli/args.h"
#include "cli/management_command.h"
#include "cli/render.h"
#include "cli/terminal.h"
#include "common/time_format.h"
#include "common/units.h"

namespace hookrelay::cli {

namespace json = boost::json;

Result<std::string> ResolveTimeFlag(const std::string& text, TimePoint now,
                                    const std::string& flag) {
  if (std::optional<TimePoint> t = ParseRfc3339(text)) return FormatRfc3339(*t);
  Result<Duration> ago = ParseDuration(text);
  if (ago.ok()) return FormatRfc3339(now - *ago);
  return Status::InvalidArgument(
      "must be an RFC 3339 time (2026-11-30T06:00:00Z) or a duration "
      "before now (90m, 2h, 1d), not \"" +
          text + "\"",
      flag);
}

std::string EventListPath(const EventListOptions& options, int page_limit,
                          const std::string& cursor) {
  std::string path = "/api/v1/events?limit=" + std::to_string(page_limit);
  auto add = [&](const char* name, const std::string& value) {
    if (!value.empty()) path += std::string("&") + name + "=" + PercentEncode(value);
  };
  add("status", options.status);
  add("source", options.source);
  add("destination", options.destination);
  add("since", options.since);
  add("until", options.until);
  add("type", options.type);
  add("routed", options.routed);
  add("cursor", cursor);
  return path;
}

Result<json::object> FetchEvents(ApiClient& client, const EventListOptions& options) {
  json::array items;
  json::value next = nullptr;
  std::string cursor = options.cursor;
  while (static_cast<int>(items.size()) < options.limit) {
    int want = std::min(options.limit - static_cast<int>(items.size()), kEventPageLimit);
    Result<json::value> page = client.Get(EventListPath(options, want, cursor));
    if (!page.ok()) return page.status();
    const json::object* o = page->if_object();
    const json::value* page_items = o ? o->if_contains("items") : nullptr;
    if (!page_items || !page_items->is_array()) {
      return Status::Internal("the API answered without an \"items\" list");
    }
    for (const json::value& item : page_items->get_array()) {
      if (static_cast<int>(items.size()) >= options.limit) break;
      items.push_back(item);
    }
    const json::value* n = o->if_contains("next_cursor");
    if (!n || !n->is_string() || n->get_string().empty()) {
      next = nullptr;
      break;
    }
    next = *n;
    cursor = std::string(n->get_string());
  }
  return json::object{{"items", std::move(items)}, {"next_cursor", std::move(next)}};
}

namespace {

TimePoint Now() { return SystemClock::Instance().Now(); }

// An empty list filtered by a source or destination the catalog does not have is a typo, said as
// `replay` says it. Checked only when nothing matched: events of a source removed since stay
// listable.
Status CheckFilterNames(ApiClient& client, const EventListOptions& options) {
  for (auto [kind, name] :
       {std::pair{"source", &options.source}, std::pair{"destination", &options.destination}}) {
    if (name->empty()) continue;
    Result<json::value> found =
        client.Get("/api/v1/" + std::string(kind) + "s/" + PercentEncode(*name));
    if (found.ok()) continue;
    if (found.status().code() != Status::Code::kNotFound) return found.status();
    return Status::InvalidArgument(std::string(kind) + ": no " + kind + " \"" + *name +
                                   "\" (see `hookrelay " + kind + "s list`)");
  }
  return Status::Ok();
}

}  // namespace

void AddEventsCommand(Command app, int& exit_code) {
  Command events = app.Subcommand("events", "List and inspect received events (the API)");
  events.RequireSubcommand();

  {
    auto options = std::make_shared<EventListOptions>();
    auto common = std::make_shared<ManagementOptions>();
    Command list = events.Subcommand("list", "List received events (filters combine)");
    list.Add("--status", options->status,
             "Only events with a destination whose current delivery is in this status")
        .OneOf({"scheduled", "delivering", "delivered", "failed", "paused"});
    list.Add("--source", options->source, "Only events from this source");
    list.Add("--destination", options->destination,
             "Only events with a delivery to this destination");
    list.Add("--since", options->since,
             "Received at or after: RFC 3339 time, or a duration before now (2h)");
    list.Add("--until", options->until, "Received before: RFC 3339 time, or a duration");
    list.Add("--type", options->type,
             "Only events of this type: a name, or a prefix and * ('invoice.*')");
    list.Add("--routed", options->routed,
             "false: only events no route took (true: only those one took)")
        .OneOf({"true", "false"});
    list.Add("--limit", options->limit,
             "At most this many events (default " + std::to_string(kDefaultListLimit) +
                 ", at most " + std::to_string(kMaxListLimit) + ", as the API)")
        .InRange(1, kMaxListLimit);
    list.Add("--cursor", options->cursor,
             "Start after this event: the next_cursor of an earlier list (--json) or the "
             "one its table names");
    AddManagementOptions(list, *common);
    list.Callback([options, common, &exit_code] {
      EventListOptions resolved = *options;
      TimePoint now = Now();
      for (auto [text, flag] :
           {std::pair{&resolved.since, "--since"}, std::pair{&resolved.until, "--until"}}) {
        if (text->empty()) continue;
        Result<std::string> t = ResolveTimeFlag(*text, now, flag);
        if (!t.ok()) throw UsageError(flag, t.status().message());
        *text = *t;
      }
      ApiClient client = MakeClient(*common);
      Result<json::object> page = FetchEvents(client, resolved);
      if (!page.ok()) {
        exit_code = ReportApiError("events list", page.status());
        return;
      }
      if (page->at("items").as_array().empty()) {
        if (Status s = CheckFilterNames(client, resolved); !s.ok()) {
          exit_code = ReportApiError("events list", s);
          return;
        }
      }
      if (common->json) {
        PrintJson(*page);
      } else {
        std::cout << RenderEventList(page->at("items").as_array(), Now(), TerminalWidth());
        if (const json::value& next = page->at("next_cursor"); next.is_string()) {
          std::cout << RenderNextPageHint("events", std::string(next.get_string()), TerminalWidth(),
                                          /*has_filters=*/true);
        }
      }
      exit_code = 0;
    });
  }

  {
    auto id = std::make_shared<std::string>();
    auto common = std::make_shared<ManagementOptions>();
    Command show = events.Subcommand("show", "Show an event with its deliveries and attempts");
    show.Add("id", *id, "Event id").Required();
    AddManagementOptions(show, *common);
    show.Callback([id, common, &exit_code] {
      ApiClient client = MakeClient(*common);
      // The table does not show the body: do not fetch it (--json gets the whole event).
      Result<json::value> event =
          client.Get("/api/v1/events/" + PercentEncode(*id) + (common->json ? "" : "?body=false"));
      if (!event.ok()) {
        exit_code = ReportApiError("events show", event.status());
        return;
      }
      if (common->json) {
        PrintJson(*event);
      } else if (event->is_object()) {
        std::cout << RenderEventDetail(event->get_object(), Now(), TerminalWidth());
      } else {
        exit_code =
            ReportApiError("events show", Status::Internal("the API answered with a non-object"));
        return;
      }
      exit_code = 0;
    });
  }
}

}  // namespace hookrelay::cli
