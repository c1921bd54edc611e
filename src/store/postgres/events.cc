// PostgresStore (postgres_store.h): Reads of events, with their deliveries and attempts.

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

#include "common/list_limits.h"
#include "store/event_id.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg_store::ArrayLiteral;
using pg_store::kDeliveryColumns;
using pg_store::ReadDelivery;

namespace {

constexpr char kEventColumns[] =
    "e.id, e.source, e.received_at, e.content_type, e.size, e.dedup_key, e.headers, e.type,"
    " e.routed, e.route_misses";

Result<Event> ReadEvent(const PgResult& r, int row, bool with_body, uint64_t id_bits) {
  Event e;
  e.id = EventIdFromKey(r.Int(row, 0), id_bits);
  e.source = r.Text(row, 1);
  e.received_at = r.Time(row, 2);
  e.content_type = r.Bytes(row, 3);
  e.size = r.Int(row, 4);
  e.dedup_key = r.OptBytes(row, 5);
  HR_ASSIGN_OR_RETURN(e.headers, DecodeHeaders(r.Bytes(row, 6)));
  e.type = r.OptText(row, 7);
  e.routed = r.Bool(row, 8);
  HR_ASSIGN_OR_RETURN(e.route_misses, DecodeRouteMisses(r.Bytes(row, 9)));
  if (with_body) e.body = r.Bytes(row, 10);
  return e;
}

Result<std::vector<Delivery>> ReadDeliveries(const PgResult& r, uint64_t id_bits) {
  std::vector<Delivery> out;
  out.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    HR_ASSIGN_OR_RETURN(Delivery d, ReadDelivery(r, i, id_bits));
    out.push_back(std::move(d));
  }
  return out;
}

// The attempts of `r` (rows of kAttemptColumns), in the order read.
constexpr char kAttemptColumns[] =
    "delivery_id, n, started_at, duration_ms, status_code, error, retry_after, snippet, probe,"
    " counted, sent_size, sent_sha256, headers_changed";

std::vector<Attempt> ReadAttempts(const PgResult& r) {
  std::vector<Attempt> out;
  out.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    Attempt a;
    a.delivery_id = r.Int(i, 0);
    a.n = static_cast<int>(r.Int(i, 1));
    a.started_at = r.Time(i, 2);
    a.duration_ms = r.Int(i, 3);
    if (!r.IsNull(i, 4)) a.status_code = static_cast<int>(r.Int(i, 4));
    a.error = r.OptText(i, 5);
    a.retry_after = r.OptText(i, 6);
    a.response_snippet = r.Bytes(i, 7);
    a.probe = r.Bool(i, 8);
    a.counted = r.Bool(i, 9);
    if (!r.IsNull(i, 10)) {
      a.transformed = Attempt::Transformed{r.Int(i, 10), r.Text(i, 11), r.Text(i, 12)};
    }
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::optional<Event>> ReadEventIn(PgConn& db, int64_t key, const std::string& id,
                                         uint64_t id_bits) {
  PgParams p;
  const std::string sql =
      std::string("SELECT ") + kEventColumns + ", e.body FROM events e WHERE e.id = " + p.Int(key);
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get event " + id));
  if (r.rows() == 0) return std::optional<Event>();
  HR_ASSIGN_OR_RETURN(Event e, ReadEvent(r, 0, true, id_bits));
  return std::optional<Event>(std::move(e));
}

Result<std::vector<Delivery>> ReadDeliveriesIn(PgConn& db, int64_t key, const std::string& event_id,
                                               uint64_t id_bits) {
  PgParams p;
  const std::string sql = std::string("SELECT ") + kDeliveryColumns +
                          " FROM deliveries WHERE event_id = " + p.Int(key) + " ORDER BY id";
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get deliveries of " + event_id));
  return ReadDeliveries(r, id_bits);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reads of events and deliveries

Result<std::optional<Event>> PostgresStore::GetEvent(const std::string& id) {
  const std::optional<int64_t> key = EventKeyFromId(id, event_id_bits_);
  if (!key) return std::optional<Event>();  // not an id of this store: no such event
  return WithConn<std::optional<Event>>([&](PgConn& db) -> Result<std::optional<Event>> {
    return ReadEventIn(db, *key, id, event_id_bits_);
  });
}

Result<std::optional<EventDetail>> PostgresStore::GetEventDetail(const std::string& id) {
  const std::optional<int64_t> key = EventKeyFromId(id, event_id_bits_);
  if (!key) return std::optional<EventDetail>();
  return InTransaction<std::optional<EventDetail>>(
      [&](PgConn& db) -> Result<std::optional<EventDetail>> {
        // One snapshot for every read below (READ COMMITTED would take one per statement).
        HR_RETURN_IF_ERROR(db.Script("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                                     "begin the event detail's read"));
        HR_ASSIGN_OR_RETURN(std::optional<Event> event, ReadEventIn(db, *key, id, event_id_bits_));
        if (!event) return std::optional<EventDetail>();
        EventDetail detail{std::move(*event), {}};
        HR_ASSIGN_OR_RETURN(std::vector<Delivery> deliveries,
                            ReadDeliveriesIn(db, *key, id, event_id_bits_));
        // Every attempt of the event in one query (the event's key prunes to its partition).
        PgParams p;
        const std::string sql = std::string("SELECT ") + kAttemptColumns +
                                " FROM attempts WHERE event_id = " + p.Int(*key) +
                                " ORDER BY delivery_id, n";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get attempts of " + id));
        std::map<int64_t, std::vector<Attempt>> attempts;
        for (Attempt& a : ReadAttempts(r)) attempts[a.delivery_id].push_back(std::move(a));
        detail.deliveries.reserve(deliveries.size());
        for (Delivery& d : deliveries) {
          std::optional<Delivery> held_behind;
          if (d.order_key &&
              (d.status == DeliveryStatus::kScheduled || d.status == DeliveryStatus::kPaused)) {
            HR_ASSIGN_OR_RETURN(std::optional<Delivery> head,
                                ReadOrderHeadIn(db, d.destination, *d.order_key));
            if (head && head->id != d.id) held_behind = std::move(head);
          }
          std::vector<Attempt> mine = std::move(attempts[d.id]);
          detail.deliveries.push_back({std::move(d), std::move(mine), std::move(held_behind)});
        }
        return std::optional<EventDetail>(std::move(detail));
      });
}

Result<std::vector<std::optional<Event>>> PostgresStore::GetEvents(
    const std::vector<std::string>& ids) {
  std::vector<std::optional<Event>> out(ids.size());
  std::vector<int64_t> keys;
  for (const std::string& id : ids) {
    if (std::optional<int64_t> k = EventKeyFromId(id, event_id_bits_)) keys.push_back(*k);
  }
  if (keys.empty()) return out;
  Result<std::map<int64_t, Event>> found =
      WithConn<std::map<int64_t, Event>>([&](PgConn& db) -> Result<std::map<int64_t, Event>> {
        PgParams p;
        const std::string sql = std::string("SELECT ") + kEventColumns +
                                ", e.body FROM events e WHERE e.id = ANY (" +
                                p.Text(ArrayLiteral(keys)) + "::bigint[])";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get events"));
        std::map<int64_t, Event> m;
        for (int i = 0; i < r.rows(); ++i) {
          HR_ASSIGN_OR_RETURN(Event e, ReadEvent(r, i, true, event_id_bits_));
          m.emplace(r.Int(i, 0), std::move(e));
        }
        return m;
      });
  if (!found.ok()) return found.status();
  for (size_t i = 0; i < ids.size(); ++i) {
    std::optional<int64_t> k = EventKeyFromId(ids[i], event_id_bits_);
    if (!k) continue;
    auto it = found->find(*k);
    if (it != found->end()) out[i] = it->second;
  }
  return out;
}

Result<EventPage> PostgresStore::ListEvents(const EventFilter& filter, const std::string& cursor,
                                            int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  std::optional<int64_t> after;
  if (!cursor.empty()) {
    after = EventKeyFromId(cursor, event_id_bits_);
    if (!after) return BadCursor();
  }
  PgParams p;
  std::string sql = std::string("SELECT ") + kEventColumns + " FROM events e WHERE true";
  if (after) sql += " AND e.id < " + p.Int(*after);
  if (filter.source) sql += " AND e.source = " + p.Text(*filter.source);
  // A time range is a key range (keys are time-ordered).
  if (filter.since) sql += " AND e.id >= " + p.Int(EventKeyFloor(*filter.since));
  if (filter.until) sql += " AND e.id < " + p.Int(EventKeyFloor(*filter.until));
  if (filter.type) {
    if (const std::optional<std::string_view> prefix = TypePrefix(*filter.type)) {
      const std::string param = p.Text(std::string(*prefix));
      sql += " AND starts_with(e.type, " + param + ") AND octet_length(e.type) > octet_length(" +
             param + ")";
    } else {
      sql += " AND e.type = " + p.Text(*filter.type);
    }
  }
  if (filter.routed) sql += *filter.routed ? " AND e.routed" : " AND NOT e.routed";
  if (filter.within) {
    sql += " AND (e.source IN (SELECT jsonb_array_elements_text(" +
           p.Text(JsonStringArray(filter.within->sources)) +
           "::jsonb)) OR EXISTS (SELECT 1 FROM deliveries w WHERE w.event_id = e.id AND"
           " w.destination IN (SELECT jsonb_array_elements_text(" +
           p.Text(JsonStringArray(filter.within->destinations)) + "::jsonb))))";
  }
  if (filter.status || filter.destination) {
    // Both set: one delivery must match both (a failed delivery *to* that destination).
    sql += " AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id";
    if (filter.status) {
      sql += " AND d.status = " + p.Text(DeliveryStatusName(*filter.status)) + " AND d.current";
    }
    if (filter.destination) sql += " AND d.destination = " + p.Text(*filter.destination);
    sql += ")";
  }
  sql += " ORDER BY e.id DESC LIMIT " + p.Int(limit + 1);  // one more: is there a next page?
  return WithConn<EventPage>([&](PgConn& db) -> Result<EventPage> {
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list events"));
    EventPage page;
    std::vector<int64_t> keys;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = page.items.back().id;
        break;
      }
      HR_ASSIGN_OR_RETURN(Event e, ReadEvent(r, i, false, event_id_bits_));
      keys.push_back(r.Int(i, 0));
      page.items.push_back(std::move(e));
    }
    if (keys.empty()) return page;
    // Each event's current deliveries, in one query for the page.
    PgParams q;
    const std::string cur_sql =
        "SELECT event_id, destination, status, chain FROM deliveries WHERE event_id = ANY (" +
        q.Text(ArrayLiteral(keys)) +
        "::bigint[]) AND current ORDER BY event_id, destination COLLATE \"C\"";
    HR_ASSIGN_OR_RETURN(PgResult cur, db.Exec(cur_sql, q, "current deliveries"));
    std::map<int64_t, std::vector<CurrentDelivery>> by_event;
    for (int i = 0; i < cur.rows(); ++i) {
      const std::string status = cur.Text(i, 2);
      std::optional<DeliveryStatus> parsed = ParseDeliveryStatus(status);
      if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
      by_event[cur.Int(i, 0)].push_back({cur.Text(i, 1), *parsed, static_cast<int>(cur.Int(i, 3))});
    }
    for (size_t i = 0; i < page.items.size(); ++i) {
      auto it = by_event.find(keys[i]);
      if (it != by_event.end()) page.items[i].current = std::move(it->second);
    }
    return page;
  });
}

Result<std::vector<Delivery>> PostgresStore::GetDeliveries(const std::string& event_id) {
  const std::optional<int64_t> key = EventKeyFromId(event_id, event_id_bits_);
  if (!key) return std::vector<Delivery>{};
  return WithConn<std::vector<Delivery>>([&](PgConn& db) -> Result<std::vector<Delivery>> {
    return ReadDeliveriesIn(db, *key, event_id, event_id_bits_);
  });
}

Result<std::vector<Attempt>> PostgresStore::GetAttempts(int64_t delivery_id) {
  return WithConn<std::vector<Attempt>>([&](PgConn& db) -> Result<std::vector<Attempt>> {
    // The delivery's event first: its key as a constant prunes the attempts to one partition
    // when the query is planned (with a subquery instead, every day's partition was planned and
    // pruned only when the plan ran: several times slower with a month of days).
    PgParams q;
    const std::string ev = "SELECT event_id FROM deliveries WHERE id = " + q.Int(delivery_id);
    HR_ASSIGN_OR_RETURN(PgResult e, db.Exec(ev, q, "get the event of a delivery"));
    if (e.rows() == 0) return std::vector<Attempt>{};
    PgParams p;
    const std::string sql = std::string("SELECT ") + kAttemptColumns +
                            " FROM attempts WHERE delivery_id = " + p.Int(delivery_id) +
                            " AND event_id = " + p.Int(e.Int(0, 0)) + " ORDER BY n";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get attempts"));
    return ReadAttempts(r);
  });
}

}  // namespace hookrelay::store
