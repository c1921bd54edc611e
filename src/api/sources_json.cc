#include "api/sources_json.h"

#include <algorithm>
#include <boost/json.hpp>
#include <optional>

#include "api/json_util.h"
#include "common/time_format.h"
#include "model/destination.h"

namespace hookrelay::api {

namespace json = boost::json;

json::object SourceViewToJson(const model::Source& s, TimePoint now) {
  json::object o = SourceToJson(s);
  if (!s.verify) return o;
  int old_secrets = 0;
  std::optional<TimePoint> last;
  for (const model::ExpiringSecret& e : s.verify->secrets_previous) {
    if (!e.ValidAt(now)) continue;
    ++old_secrets;
    last = last ? std::max(*last, e.expires_at) : e.expires_at;
  }
  json::value rotation = nullptr;
  if (last) {
    rotation = json::object{{"old_secrets", old_secrets}, {"old_expires_at", FormatRfc3339(*last)}};
  }
  o["verify"].as_object()["secrets_rotation"] = std::move(rotation);
  return o;
}

json::object SourceListToJson(const model::Catalog& catalog, TimePoint now) {
  json::array items;
  for (const auto& [name, s] : catalog.sources) items.push_back(SourceViewToJson(s, now));
  return List(std::move(items));
}

json::object RejectionCountsToJson(const ingest::RejectionCounts& counts) {
  json::object by_reason;
  for (size_t i = 0; i < std::size(ingest::kRejectReasons); ++i) {
    by_reason[ingest::RejectReasonName(ingest::kRejectReasons[i])] = counts.by_reason[i];
  }
  json::value last = nullptr;
  if (counts.last_at) last = json::string(FormatRfc3339(*counts.last_at));
  return {{"since_start", counts.total},
          {"not_recorded", counts.not_recorded},
          {"last_at", std::move(last)},
          {"by_reason", std::move(by_reason)}};
}

json::object RejectionPageToJson(const store::RejectionPage& page,
                                 const ingest::RejectionCounts& counts) {
  json::array items;
  items.reserve(page.items.size());
  for (const store::Rejection& r : page.items) {
    json::array headers;
    // Credentials were replaced before the row was written; names that look like one are
    // hidden here too, as in the event detail.
    for (const store::Header& h : r.headers) {
      headers.push_back(json::array{h.name, model::IsCredentialName(h.name)
                                                ? std::string_view(model::kRedacted)
                                                : std::string_view(h.value)});
    }
    json::value remote = nullptr;
    if (!r.remote_addr.empty()) remote = json::string(r.remote_addr);
    items.push_back(json::object{{"id", std::to_string(r.id)},
                                 {"received_at", FormatRfc3339(r.received_at)},
                                 {"reason", r.reason},
                                 {"message", r.message},
                                 {"headers", std::move(headers)},
                                 {"size", r.size},
                                 {"sha256", r.sha256},
                                 {"remote_addr", std::move(remote)}});
  }
  json::value next = nullptr;
  if (!page.next_cursor.empty()) next = json::string(page.next_cursor);
  json::object o = List(std::move(items), std::move(next));
  o["counts"] = RejectionCountsToJson(counts);
  return o;
}

}  // namespace hookrelay::api
