#include "cli/replay_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/events_command.h"
#include "cli/management_command.h"
#include "cli/render.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

constexpr auto kPollEvery = std::chrono::milliseconds(200);
constexpr auto kPlainProgressEvery = std::chrono::seconds(1);
constexpr int kBarWidth = 30;

struct BulkOptions {
  std::string status;
  std::string destination;
  std::string source;
  std::string since;
  std::string until;
  std::string rate;
  bool no_wait = false;
};

int64_t Field(const json::object& job, std::string_view name) {
  const json::value* v = job.if_contains(name);
  return v && v->is_int64() ? v->as_int64() : 0;
}

std::string State(const json::object& job) {
  const json::value* v = job.if_contains("state");
  return v && v->is_string() ? std::string(v->get_string()) : "";
}

bool Final(const std::string& state) {
  return state == "done" || state == "cancelled" || state == "failed";
}

}  // namespace

std::string RenderBulkReplayProgress(const json::object& job, bool bar) {
  const int64_t total = Field(job, "total");
  const int64_t done = Field(job, "done");
  const int64_t failed = Field(job, "failed");
  const int64_t processed = done + failed;
  const int percent = total > 0 ? static_cast<int>(std::min<int64_t>(100, processed * 100 / total))
                                : (Final(State(job)) ? 100 : 0);
  std::ostringstream out;
  if (bar) {
    const int filled = percent * kBarWidth / 100;
    out << "[" << std::string(filled, '#') << std::string(kBarWidth - filled, '.') << "] ";
  }
  out << percent << "% " << processed << "/" << total << " (" << failed << " failed) "
      << State(job);
  return out.str();
}

std::string RenderBulkReplayResult(const json::object& job) {
  std::ostringstream out;
  const json::value* id = job.if_contains("id");
  out << "Bulk replay " << (id && id->is_string() ? std::string(id->get_string()) : "?") << " "
      << State(job) << ": " << Field(job, "done") << " replayed, " << Field(job, "failed")
      << " failed, of " << Field(job, "total") << "\n";
  const json::value* error = job.if_contains("error");
  if (error && error->is_string()) out << "error: " << std::string(error->get_string()) << "\n";
  return out.str();
}

namespace {

// POST /api/v1/replays, then (unless no_wait) polls the job to its end, drawing progress on
// stderr. Returns the exit code.
int RunBulkReplay(const BulkOptions& o, const ManagementOptions& common) {
  json::object body;
  body["status"] = o.status;
  if (!o.destination.empty()) body["destination"] = o.destination;
  if (!o.source.empty()) body["source"] = o.source;
  const TimePoint now = SystemClock::Instance().Now();
  for (auto [flag, text] :
       {std::pair<const char*, const std::string*>{"since", &o.since}, {"until", &o.until}}) {
    if (text->empty()) continue;
    Result<std::string> t = ResolveTimeFlag(*text, now, std::string("--") + flag);
    if (!t.ok()) {
      std::cerr << "hookrelay replay: " << t.status().message() << "\n";
      return 2;
    }
    body[flag] = *t;
  }
  // A bare number is per second.
  if (!o.rate.empty())
    body["rate"] = o.rate.find('/') == std::string::npos ? o.rate + "/s" : o.rate;
  ApiClient client = MakeClient(common);
  Result<json::value> created = client.Post("/api/v1/replays", body);
  if (!created.ok()) return ReportApiError("replay", created.status());
  if (!created->is_object()) {
    return ReportApiError("replay", Status::Internal("the API answered with a non-object"));
  }
  json::object job = created->get_object();
  const json::value* id_value = job.if_contains("id");
  if (!id_value || !id_value->is_string()) {
    return ReportApiError("replay", Status::Internal("the API answered without a job id"));
  }
  const std::string id(id_value->get_string());
  if (o.no_wait) {
    if (common.json) {
      PrintJson(job);
    } else {
      std::cout << "Bulk replay " << id << " queued: " << Field(job, "total") << " events at "
                << json::serialize(job["rate"]) << "/s\n";
    }
    return 0;
  }
  const bool tty = isatty(STDERR_FILENO) == 1;
  auto last_line = std::chrono::steady_clock::now() - kPlainProgressEvery;
  std::string last_text;
  for (;;) {
    const std::string state = State(job);
    const auto now = std::chrono::steady_clock::now();
    const std::string text = RenderBulkReplayProgress(job, tty);
    if (tty) {
      std::cerr << "\r" << text << "\033[K" << std::flush;
    } else if (text != last_text && (now - last_line >= kPlainProgressEvery || Final(state))) {
      std::cerr << "replay " << id << ": " << text << "\n";
      last_line = now;
      last_text = text;
    }
    if (Final(state)) break;
    std::this_thread::sleep_for(kPollEvery);
    Result<json::value> got = client.Get("/api/v1/replays/" + PercentEncode(id));
    if (!got.ok()) {
      if (tty) std::cerr << "\n";
      return ReportApiError("replay", got.status());
    }
    if (got->is_object()) job = got->get_object();
  }
  if (tty) std::cerr << "\n";
  if (common.json) {
    PrintJson(job);
  } else {
    std::cout << RenderBulkReplayResult(job);
  }
  return State(job) == "done" ? 0 : 1;
}

}  // namespace

void AddReplayCommand(CLI::App& app, int& exit_code) {
  auto id = std::make_shared<std::string>();
  auto destination = std::make_shared<std::string>();
  auto bulk = std::make_shared<BulkOptions>();
  auto common = std::make_shared<ManagementOptions>();
  CLI::App* replay = app.add_subcommand(
      "replay",
      "Deliver an event again (a new delivery chain, the same webhook-id); with --status, every "
      "event matching a filter, paced (a bulk replay job)");
  replay->add_option("id", *id, "Event id (omit with --status)");
  replay->add_option("--destination", *destination,
                     "Only to this destination (one the event was routed to)");
  replay->add_option("--status", bulk->status,
                     "Bulk: replay events whose latest delivery is in this status (failed)");
  replay->add_option("--source", bulk->source, "Bulk: only events from this source");
  replay->add_option("--since", bulk->since,
                     "Bulk: received at or after (RFC 3339, or a duration ago: 2h)");
  replay->add_option("--until", bulk->until, "Bulk: received before (RFC 3339, or a duration ago)");
  replay->add_option("--rate", bulk->rate,
                     "Bulk: pace, e.g. 50/s (default: the destination's rate_limit, else 50/s)");
  replay->add_flag("--no-wait", bulk->no_wait, "Bulk: print the job id and return at once");
  AddManagementOptions(replay, *common);
  replay->callback([id, destination, bulk, common, &exit_code] {
    if (!bulk->status.empty()) {
      if (!id->empty()) {
        std::cerr << "hookrelay replay: give an event id or --status, not both\n";
        exit_code = 2;
        return;
      }
      bulk->destination = *destination;
      exit_code = RunBulkReplay(*bulk, *common);
      return;
    }
    if (id->empty()) {
      std::cerr << "hookrelay replay: give an event id, or --status failed for a bulk replay\n";
      exit_code = 2;
      return;
    }
    json::object body;
    if (!destination->empty()) body["destination"] = *destination;
    ApiClient client = MakeClient(*common);
    Result<json::value> result =
        client.Post("/api/v1/events/" + PercentEncode(*id) + "/replay", body);
    if (!result.ok()) {
      exit_code = ReportApiError("replay", result.status());
      return;
    }
    if (!result->is_object()) {
      exit_code = ReportApiError("replay", Status::Internal("the API answered with a non-object"));
      return;
    }
    if (common->json) {
      PrintJson(*result);
    } else {
      std::cout << RenderReplayResult(result->get_object());
    }
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
