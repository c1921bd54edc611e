#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/stats.h"

namespace hookrelay::api {

namespace json = boost::json;

http::Response ApiHandler::Stats(const http::Request& request, const access::Scope* scope) const {
  auto q = ParseStatsQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  const TimePoint now = clock_.Now();
  const auto [since, until] = StatsRange(*q, now);
  auto rows = store_.GetStats(since, until);
  if (!rows.ok()) return FromStatus(rows.status());
  if (scope) {
    // A scoped token counts its own destinations' deliveries alone (received events are counted
    // per node, not per source: none of them).
    std::erase_if(*rows, [scope](const store::StatsRow& r) {
      return !scope->ReachesDestination(r.destination);
    });
  }
  auto due = store_.CountDue(now);
  if (!due.ok()) return FromStatus(due.status());
  auto oldest = store_.OldestDueAt(now);
  if (!oldest.ok()) return FromStatus(oldest.status());
  return Json(StatsToJson(*q, now, *rows, *due, *oldest));
}

}  // namespace hookrelay::api
