#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>

#include "cli/args.h"
#include "common/clock.h"

namespace hookrelay::cli {

// Registers
//   replay EVENT_ID [--destination D] [--json]      POST /api/v1/events/ID/replay
//   replay --status failed [--destination D] [--source S] [--since T] [--until T] [--rate R]
//          [--no-wait] [--json]     POST /api/v1/replays, then polls the job to its end with a
//          progress bar on stderr when stderr is a terminal, plain progress lines otherwise, and
//          prints the totals. Ctrl-C stops watching (exit 130) and says that the job keeps
//          running and how to watch or cancel it.
//   replay list | replay status JOB | replay cancel JOB   GET /api/v1/replays, GET|DELETE …/JOB
// "list", "status" and "cancel" are subcommands; any other word after `replay` is an event id
// (event ids are 26-character ULIDs, never one of these words).
// `exit_code` is set after parsing: 0, 1 for an API error (past the replay window, unknown
// event, …) or a bulk job that ended cancelled or failed, 2 for bad usage, 130 on Ctrl-C.
void AddReplayCommand(Command app, int& exit_code);

// "[#########.....] 43% 860/2000 (2 failed) running" (without the bar when `bar` is false),
// then "; waiting: breaker open on analytics until 23:39 (in 28m)" while the job's "waiting"
// field says why it cannot make progress (nothing when the field is null or absent).
std::string RenderBulkReplayProgress(const boost::json::object& job, bool bar, TimePoint now);
// `replay status JOB`: the job, its progress, why it waits, its filter, rate and times.
std::string RenderBulkReplayJob(const boost::json::object& job, TimePoint now);
// `replay list`: ID, STATE, PROGRESS, RATE, CREATED; "No bulk replays." when empty.
std::string RenderBulkReplayList(const boost::json::array& jobs, TimePoint now);
// A rate in events per second as a flag would give it: "50/s", "1/m", "0.5/s".
std::string FormatRatePerSecond(double per_second);
// "Bulk replay ID done: 1998 replayed, 2 failed, of 2000\n" (+ "error: …" for a failed job).
std::string RenderBulkReplayResult(const boost::json::object& job);

}  // namespace hookrelay::cli
