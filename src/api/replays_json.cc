#include "api/replays_json.h"

#include <boost/json.hpp>

#include "api/json_util.h"
#include "common/time_format.h"

namespace hookrelay::api {

namespace json = boost::json;

json::object ReplayResultToJson(const std::string& event_id,
                                const std::vector<store::Delivery>& created) {
  json::array replays;
  for (const store::Delivery& d : created) {
    replays.push_back(
        json::object{{"destination", d.destination}, {"chain", d.chain}, {"delivery_id", d.id}});
  }
  return {{"event", event_id}, {"replays", std::move(replays)}};
}

json::object ReplayJobToJson(const store::ReplayJob& job) {
  json::object o;
  o["id"] = job.id;
  o["state"] = store::ReplayJobStateName(job.state);
  o["total"] = job.total;
  o["done"] = job.done;
  o["failed"] = job.failed;
  o["rate"] = job.rate;
  boost::system::error_code ec;
  json::value filter = json::parse(job.filter, ec);
  o["filter"] = ec ? json::value(nullptr) : std::move(filter);
  o["created_at"] = FormatRfc3339(job.created_at);
  o["updated_at"] = FormatRfc3339(job.updated_at);
  o["error"] = job.error ? json::value(*job.error) : json::value(nullptr);
  const int64_t rest = job.total - job.done - job.failed;
  o["skipped"] = job.state == store::ReplayJobState::kDone && rest > 0 ? rest : 0;
  json::value waiting = nullptr;
  if (job.waiting && !store::IsFinal(job.state)) {
    boost::system::error_code wec;
    json::value w = json::parse(*job.waiting, wec);
    if (!wec && w.is_object()) waiting = std::move(w);
  }
  o["waiting"] = std::move(waiting);
  return o;
}

json::object ReplayJobPageToJson(const store::ReplayJobPage& page) {
  json::array items;
  for (const store::ReplayJob& job : page.items) items.push_back(ReplayJobToJson(job));
  return List(std::move(items),
              page.next_cursor.empty() ? json::value(nullptr) : json::value(page.next_cursor));
}

}  // namespace hookrelay::api
