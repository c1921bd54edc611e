#include "cli/replay_command.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/args.h"
#include "cli/events_command.h"
#include "cli/management_command.h"
#include "cli/render.h"
#include "common/units.h"
#include "http/json_text.h"

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
  std::string type;
  std::string rate;
  bool unrouted = false;  // routed=false: events no route took, to `destination`
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

std::string RenderBulkReplayProgress(const json::object& job, bool bar, TimePoint now) {
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
  if (!Final(State(job))) {
    if (std::string waiting = RenderWaiting(job.if_contains("waiting"), now); !waiting.empty()) {
      out << "; waiting: " << waiting;
    }
  }
  return out.str();
}

std::string FormatRatePerSecond(double per_second) { return FormatRateShort(per_second); }

namespace {

std::string RateText(const json::object& job) {
  const json::value* rate = job.if_contains("rate");
  if (!rate || !rate->is_number()) return "-";
  return FormatRatePerSecond(rate->to_number<double>());
}

std::string Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return "-";
  if (v->is_string()) return std::string(v->get_string());
  return http::SerializeJson(*v);
}

// "status=failed destination=ops since 06:00:00": the job's filter, times local.
std::string FilterText(const json::object& job, TimePoint now) {
  const json::value* f = job.if_contains("filter");
  if (!f || !f->is_object() || f->get_object().empty()) return "-";
  std::string out;
  for (const auto& [key, value] : f->get_object()) {
    if (!out.empty()) out += ", ";
    std::string text =
        value.is_string() ? std::string(value.get_string()) : http::SerializeJson(value);
    out += std::string(key) + " " + LocalizeTimes(text, now);
  }
  return out;
}

}  // namespace

std::string RenderBulkReplayJob(const json::object& job, TimePoint now) {
  std::ostringstream out;
  out << "Bulk replay " << Str(job, "id") << ": " << State(job) << "\n";
  json::object progress = job;
  progress.erase("waiting");
  std::string p = RenderBulkReplayProgress(progress, false, now);
  out << "  progress  " << p.substr(0, p.rfind(' ')) << "\n";
  if (!Final(State(job))) {
    if (std::string waiting = RenderWaiting(job.if_contains("waiting"), now); !waiting.empty()) {
      out << "  waiting   " << waiting << "\n";
    }
  }
  out << "  filter    " << FilterText(job, now) << "\n";
  out << "  rate      " << RateText(job) << "\n";
  out << "  created   " << FormatApiTime(job.if_contains("created_at"), now, /*with_zone=*/true)
      << "\n";
  out << "  updated   " << FormatApiTime(job.if_contains("updated_at"), now) << "\n";
  const json::value* error = job.if_contains("error");
  if (error && error->is_string()) {
    out << "  error     " << LocalizeTimes(error->get_string(), now) << "\n";
  }
  if (!Final(State(job))) {
    const std::string id = Str(job, "id");
    out << "Cancel it with `hookrelay replay cancel " << id << "`.\n";
  }
  return out.str();
}

static std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string RenderBulkReplayList(const json::array& jobs, TimePoint now) {
  if (jobs.empty()) return "No bulk replays.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : jobs) {
    if (!v.is_object()) continue;
    const json::object& job = v.get_object();
    std::string progress = std::to_string(Field(job, "done") + Field(job, "failed")) + "/" +
                           std::to_string(Field(job, "total"));
    if (Field(job, "failed") > 0)
      progress += " (" + std::to_string(Field(job, "failed")) + " failed)";
    std::string state = State(job);
    const json::value* waiting = job.if_contains("waiting");
    if (!Final(state) && waiting && waiting->is_object()) state += ", waiting";
    rows.push_back({Str(job, "id"), state, progress, RateText(job),
                    FormatApiTime(job.if_contains("created_at"), now)});
  }
  const std::vector<std::string> header = {"ID", "STATE", "PROGRESS", "RATE",
                                           "CREATED (" + LocalZoneName(now) + ")"};
  // Wider than 80 columns: CREATED keeps only its clock ("05:39:48", not "…, 22m12s ago").
  size_t widest = 0;
  for (const std::string& line : Lines(RenderTable(header, rows))) {
    widest = std::max(widest, line.size());
  }
  if (widest > 80) {
    for (auto& row : rows) row.back() = row.back().substr(0, row.back().find(", "));
  }
  return RenderTable(header, rows);
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

volatile std::sig_atomic_t g_interrupted = 0;

void OnInterrupt(int) { g_interrupted = 1; }

// While a bulk replay is watched, Ctrl-C stops the watching, not the job: the loop notices the
// flag, says so and exits 130. No SA_RESTART, so a blocked poll returns at once.
void CatchInterrupt() {
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

// Columns of the terminal on stderr (COLUMNS, else 80 when it cannot be asked).
size_t TerminalWidth() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return std::atoi(c);
  return 80;
}

// A line redrawn with "\r" must not wrap, or every redraw leaves a line behind.
std::string FitLine(std::string text, size_t width) {
  if (width > 1 && text.size() > width - 1) {
    text.resize(width - 1);
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) {
      text.pop_back();  // never half a UTF-8 character
    }
    if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
  }
  return text;
}

int Interrupted(const std::string& id, bool tty) {
  if (tty) std::cerr << "\n";
  std::cerr << "hookrelay replay: interrupted; job " << id
            << " keeps running on the server; watch it with `hookrelay replay status " << id
            << "`, cancel it with `hookrelay replay cancel " << id << "`\n";
  return 130;
}

// POST /api/v1/replays, then (unless no_wait) polls the job to its end, drawing progress on
// stderr. Returns the exit code.
int RunBulkReplay(const BulkOptions& o, const ManagementOptions& common) {
  ApiClient client = MakeClient(common);
  json::object body;
  if (o.unrouted) {
    body["routed"] = false;
  } else {
    body["status"] = o.status;
  }
  if (!o.destination.empty()) body["destination"] = o.destination;
  if (!o.source.empty()) body["source"] = o.source;
  if (!o.type.empty()) body["type"] = o.type;
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
  // A bare number is per second. Checked here, so an error shows what was typed.
  if (!o.rate.empty()) {
    const std::string rate = o.rate.find('/') == std::string::npos ? o.rate + "/s" : o.rate;
    Result<double> per_second = ParseRate(rate);
    if (!per_second.ok() || *per_second < 1.0 / 3600) {
      std::cerr << "hookrelay replay: --rate \"" << o.rate
                << "\": expected events per second, minute or hour, e.g. 50, 50/s, 30/m, 10/h "
                   "or 0.5/s; the least is 1/h\n";
      return 2;
    }
    body["rate"] = rate;
  }
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
      const int64_t total = Field(job, "total");
      std::cout << "Bulk replay " << id << " queued: " << total
                << (total == 1 ? " event" : " events") << " at " << RateText(job)
                << "; watch it with `hookrelay replay status " << id << "`\n";
    }
    return 0;
  }
  const bool tty = isatty(STDERR_FILENO) == 1;
  CatchInterrupt();
  auto last_line = std::chrono::steady_clock::now() - kPlainProgressEvery;
  std::string last_text;
  for (;;) {
    const std::string state = State(job);
    const auto now = std::chrono::steady_clock::now();
    if (g_interrupted) return Interrupted(id, tty);
    const std::string text = RenderBulkReplayProgress(job, tty, SystemClock::Instance().Now());
    if (tty) {
      std::cerr << "\r" << FitLine(text, TerminalWidth()) << "\033[K" << std::flush;
    } else if (text != last_text && (now - last_line >= kPlainProgressEvery || Final(state))) {
      std::cerr << "replay " << id << ": " << text << "\n";
      last_line = now;
      last_text = text;
    }
    if (Final(state)) break;
    std::this_thread::sleep_for(kPollEvery);
    if (g_interrupted) return Interrupted(id, tty);
    Result<json::value> got = client.Get("/api/v1/replays/" + PercentEncode(id));
    if (g_interrupted) return Interrupted(id, tty);
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

// replay list | replay status JOB | replay cancel JOB.
void AddJobCommands(Command replay, int& exit_code) {
  {
    auto common = std::make_shared<ManagementOptions>();
    Command list = replay.Subcommand("list", "List bulk replay jobs, newest first");
    AddManagementOptions(list, *common);
    list.Callback([common, &exit_code] {
      ApiClient client = MakeClient(*common);
      Result<json::value> page = client.Get("/api/v1/replays");
      if (!page.ok()) {
        exit_code = ReportApiError("replay list", page.status());
        return;
      }
      const json::value* items =
          page->is_object() ? page->get_object().if_contains("items") : nullptr;
      if (!items || !items->is_array()) {
        exit_code = ReportApiError("replay list",
                                   Status::Internal("the API answered without an \"items\" list"));
        return;
      }
      if (common->json) {
        PrintJson(*page);
      } else {
        std::cout << RenderBulkReplayList(items->get_array(), SystemClock::Instance().Now());
      }
      exit_code = 0;
    });
  }
  for (bool cancel : {false, true}) {
    auto common = std::make_shared<ManagementOptions>();
    auto job = std::make_shared<std::string>();
    Command cmd =
        replay.Subcommand(cancel ? "cancel" : "status",
                          cancel ? "Cancel a bulk replay job (chains already created keep going)"
                                 : "Show a bulk replay job: progress, and why it waits");
    cmd.Add("job", *job, "Job id (from `hookrelay replay list`)").Required();
    AddManagementOptions(cmd, *common);
    cmd.Callback([cancel, common, job, &exit_code] {
      ApiClient client = MakeClient(*common);
      const std::string path = "/api/v1/replays/" + PercentEncode(*job);
      if (cancel) {
        // A job that has already ended is left as it is, and the answer says so.
        Result<json::value> before = client.Get(path);
        if (before.ok() && before->is_object() && Final(State(before->get_object()))) {
          exit_code = PrintApiObject("replay cancel", std::move(before), common->json,
                                     [](const json::object& o) {
                                       return "Bulk replay " + Str(o, "id") + " was already " +
                                              State(o) + "; nothing changed.\n" +
                                              RenderBulkReplayJob(o, SystemClock::Instance().Now());
                                     });
          return;
        }
      }
      exit_code = PrintApiObject(
          cancel ? "replay cancel" : "replay status",
          cancel ? client.Delete(path) : client.Get(path), common->json,
          [cancel](const json::object& o) {
            return std::string(cancel ? "Cancelled; chains already created still go out.\n" : "") +
                   RenderBulkReplayJob(o, SystemClock::Instance().Now());
          });
    });
  }
}

}  // namespace

void AddReplayCommand(Command app, int& exit_code) {
  auto id = std::make_shared<std::string>();
  auto destination = std::make_shared<std::string>();
  auto bulk = std::make_shared<BulkOptions>();
  auto common = std::make_shared<ManagementOptions>();
  Command replay = app.Subcommand(
      "replay",
      "Deliver an event again (a new delivery chain, the same webhook-id); with --status, every "
      "event matching a filter, paced (a bulk replay job); list, status JOB, cancel JOB: the jobs");
  replay.Add("id", *id, "Event id (omit with --status); list, status and cancel are subcommands");
  replay.Add("--destination", *destination,
             "Only to this destination (any destination, for an event no route took)");
  Option status =
      replay.Add("--status", bulk->status,
                 "Bulk: replay events whose latest delivery is in this status (failed)");
  Option unrouted =
      replay.Flag("--unrouted", bulk->unrouted,
                  "Bulk: the events no route took, each to --destination (once: not again to "
                  "a destination it already has a delivery to)");
  status.Excludes(unrouted);
  replay.Add("--type", bulk->type, "Bulk: only events of this type ('invoice.*')");
  replay.Add("--source", bulk->source, "Bulk: only events from this source");
  replay.Add("--since", bulk->since,
             "Bulk: received at or after (RFC 3339, or a duration ago: 2h)");
  replay.Add("--until", bulk->until, "Bulk: received before (RFC 3339, or a duration ago)");
  replay.Add("--rate", bulk->rate,
             "Bulk: pace, e.g. 50/s (default: the destination's rate_limit, else 50/s)");
  replay.Flag("--no-wait", bulk->no_wait, "Bulk: print the job id and return at once");
  AddManagementOptions(replay, *common);
  AddJobCommands(replay, exit_code);
  replay.Callback([replay, id, destination, bulk, common, &exit_code] {
    if (replay.SubcommandGiven()) return;  // replay list|status|cancel did the work
    if (!bulk->status.empty() || bulk->unrouted) {
      if (!id->empty()) {
        std::cerr << "hookrelay replay: give an event id or --status/--unrouted, not both\n";
        exit_code = 2;
        return;
      }
      if (bulk->unrouted && destination->empty()) {
        std::cerr << "hookrelay replay: --unrouted needs --destination (where to send the "
                     "events no route took)\n";
        exit_code = 2;
        return;
      }
      bulk->destination = *destination;
      exit_code = RunBulkReplay(*bulk, *common);
      return;
    }
    if (id->empty()) {
      std::cerr << "hookrelay replay: give an event id, --status failed for a bulk replay, or "
                   "list | status JOB | cancel JOB for the bulk replay jobs\n";
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
