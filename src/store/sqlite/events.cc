// SqliteStore: append (with dedup), get and list events.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "common/crypto.h"
#include "common/id.h"
#include "common/list_limits.h"
#include "common/thread_name.h"
#include "store/event_id.h"
#include "store/row_codec.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/statements.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

// ---------------------------------------------------------------------------------------------
// Writes

void SqliteStore::AppendEvent(NewEvent event, AppendCallback done) {
  Enqueue(std::make_unique<AppendOp>(this, std::move(event), std::move(done)));
}

Status SqliteStore::Append(Connection& db, const NewEvent& ev, AppendResult* result) {
  // Strictly increasing, whatever the clock does. A run rolled back leaves a gap: harmless. The
  // stored receive time is the key's millisecond: when the clock steps back, events keep the last
  // time seen until the clock catches up, so a time range is exactly a key range.
  const int64_t key = std::max(last_event_key_ + 1, EventKeyFloor(ev.received_at));
  const TimePoint received_at = EventKeyTime(key);
  if (ev.dedup_key) {
    // Runs in the batch's transaction, after the appends queued before this one: a duplicate in
    // the same batch is found too. The window is a key range (keys are time-ordered).
    Result<Statement> q = db.Prepare(
        "SELECT id FROM events WHERE source = ?1 AND dedup_key = ?2 AND id >= ?3 "
        "ORDER BY id DESC LIMIT 1");
    if (!q.ok()) return q.status();
    q->BindText(1, ev.source)
        .BindText(2, *ev.dedup_key)
        .BindInt(3, EventKeyFloor(received_at - ev.dedup_window));
    Result<bool> row = q->Step("dedup lookup");
    if (!row.ok()) return row.status();
    if (*row) {
      result->id = EventIdFromKey(q->Int(0), event_id_bits_);
      result->duplicate = true;
      return Status::Ok();
    }
  }
  last_event_key_ = key;
  {
    // Bound without a copy (SQLITE_STATIC): they live until the insert has run.
    const std::string headers = EncodeHeaders(ev.headers);
    const std::string misses = EncodeRouteMisses(ev.route_misses);
    Result<Statement> ins = db.Prepare(
        "INSERT INTO events(id, source, received_at, content_type, size, dedup_key, headers,"
        " type, routed, route_misses, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?9, ?10, ?11, ?8)");
    if (!ins.ok()) return ins.status();
    ins->BindInt(1, key)
        .BindText(2, ev.source)
        .BindTime(3, received_at)
        .BindText(4, ev.content_type)
        .BindInt(5, static_cast<int64_t>(ev.body.size()))
        .BindOptText(6, ev.dedup_key)
        .BindBlob(7, headers)
        .BindBlob(8, ev.body)
        .BindOptText(9, ev.type)
        .BindInt(10, ev.routed ? 1 : 0);
    if (misses.empty()) {
      ins->BindNull(11);
    } else {
      ins->BindBlob(11, misses);
    }
    HR_RETURN_IF_ERROR(ins->Exec("insert event"));
  }
  if (op_) ++op_->stats[{UnixMinute(received_at), std::string()}].received;
  const TimePoint now = clock_.Now();
  for (const NewDelivery& d : ev.deliveries) {
    // Due when received (as ingest makes them): 'pending', in no index; they arrive in rowid
    // order, which is then their due order, and due at the stored receive time. Due at any other
    // time: 'scheduled', in the due index like a retry.
    const bool pending =
        d.status == DeliveryStatus::kScheduled && d.next_attempt_at == ev.received_at;
    const TimePoint due = pending ? received_at : d.next_attempt_at;
    Result<Statement> ins = db.Prepare(
        "INSERT INTO deliveries(event_id, destination, chain, status, attempts, max_attempts,"
        " next_attempt_at, reason, created_at, updated_at, order_key)"
        " VALUES (?1, ?2, 0, ?3, 0, ?4, ?5, ?6, ?7, ?7, ?8)");
    if (!ins.ok()) return ins.status();
    ins->BindInt(1, key)
        .BindText(2, d.destination)
        .BindText(3, pending ? std::string_view("pending") : DeliveryStatusName(d.status))
        .BindInt(4, d.max_attempts)
        .BindTime(5, due)
        .BindOptText(6, d.reason)
        .BindTime(7, now)
        .BindOptText(8, d.order_key);
    HR_RETURN_IF_ERROR(ins->Exec("insert delivery to " + d.destination));
    if (pending) {
      const int64_t id = db.LastInsertRowid();
      if (op_) ++op_->pending_delta[d.destination];
      MutexLock lock(leases_mu_);
      auto [it, added] = pending_.try_emplace(d.destination, Pending{0, id});
      if (!added) it->second.frontier = std::min(it->second.frontier, id);
    }
  }
  result->id = EventIdFromKey(key, event_id_bits_);
  result->duplicate = false;
  return Status::Ok();
}

Result<std::optional<Event>> SqliteStore::ReadEventIn(Connection& db, int64_t key,
                                                      const std::string& id) const {
  Result<Statement> q =
      db.Prepare(std::string("SELECT ") + kEventColumns + ", e.body FROM events e WHERE e.id = ?1");
  if (!q.ok()) return q.status();
  q->BindInt(1, key);
  Result<bool> row = q->Step("get event " + id);
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Event>();
  Result<Event> e = ReadEvent(*q, kEventBodyColumn, event_id_bits_);
  if (!e.ok()) return e.status();
  return std::optional<Event>(std::move(*e));
}

Result<std::optional<Event>> SqliteStore::GetEvent(const std::string& id) {
  const std::optional<int64_t> key = EventKeyFromId(id, event_id_bits_);
  if (!key) return std::optional<Event>();  // not an id of this store: no such event
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  return ReadEventIn(**db, *key, id);
}

Result<std::optional<EventDetail>> SqliteStore::GetEventDetail(const std::string& id) {
  const std::optional<int64_t> key = EventKeyFromId(id, event_id_bits_);
  if (!key) return std::optional<EventDetail>();
  Result<Reader> reader = AcquireReader();
  if (!reader.ok()) return reader.status();
  Connection& db = **reader;
  // One read transaction: every SELECT below sees the same snapshot of the WAL. It ends before
  // the reader goes back to the pool, whatever happens (a failed read rolls it back).
  HR_RETURN_IF_ERROR(db.ExecScript("BEGIN", "begin the event detail's read"));
  auto read = [&]() -> Result<std::optional<EventDetail>> {
    HR_ASSIGN_OR_RETURN(std::optional<Event> event, ReadEventIn(db, *key, id));
    if (!event) return std::optional<EventDetail>();
    EventDetail detail{std::move(*event), {}};
    HR_ASSIGN_OR_RETURN(std::vector<Delivery> deliveries, ReadDeliveriesIn(db, *key, id));
    detail.deliveries.reserve(deliveries.size());
    for (Delivery& d : deliveries) {
      HR_ASSIGN_OR_RETURN(std::vector<Attempt> attempts, ReadAttemptsIn(db, d.id));
      std::optional<Delivery> held_behind;
      if (d.order_key &&
          (d.status == DeliveryStatus::kScheduled || d.status == DeliveryStatus::kPaused)) {
        HR_ASSIGN_OR_RETURN(std::optional<Delivery> head,
                            ReadOrderHeadIn(db, d.destination, *d.order_key));
        if (head && head->id != d.id) held_behind = std::move(head);
      }
      detail.deliveries.push_back({std::move(d), std::move(attempts), std::move(held_behind)});
    }
    return std::optional<EventDetail>(std::move(detail));
  };
  Result<std::optional<EventDetail>> out = read();
  const Status end = db.ExecScript(out.ok() ? "COMMIT" : "ROLLBACK", "end the event detail's read");
  if (!out.ok()) return out;
  if (!end.ok()) return end;
  return out;
}

Result<std::vector<std::optional<Event>>> SqliteStore::GetEvents(
    const std::vector<std::string>& ids) {
  std::vector<std::optional<Event>> out(ids.size());
  if (ids.empty()) return out;
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  // One read transaction for all of them: each lookup on its own would take and release the
  // WAL's read lock (fcntl calls on the -shm), which costs more than the lookup.
  HR_RETURN_IF_ERROR((*db)->Exec("BEGIN", "begin read"));
  Status st = Status::Ok();
  {
    Result<Statement> q = (*db)->Prepare(std::string("SELECT ") + kEventColumns +
                                         ", e.body FROM events e WHERE e.id = ?1");
    if (!q.ok()) st = q.status();
    for (size_t i = 0; i < ids.size() && st.ok(); ++i) {
      const std::optional<int64_t> key = EventKeyFromId(ids[i], event_id_bits_);
      if (!key) continue;  // not an id of this store: no such event
      q->Reset();
      q->BindInt(1, *key);
      Result<bool> row = q->Step("get events");
      if (!row.ok()) {
        st = row.status();
      } else if (*row) {
        Result<Event> e = ReadEvent(*q, kEventBodyColumn, event_id_bits_);
        if (!e.ok()) {
          st = e.status();
        } else {
          out[i] = std::move(*e);
        }
      }
    }
  }
  Status end = (*db)->Exec("COMMIT", "end read");
  // A reader goes back to the pool: never with its transaction still open.
  if (!end.ok() && (*db)->InTransaction()) (void)(*db)->Exec("ROLLBACK", "end read");
  if (!st.ok()) return st;
  if (!end.ok()) return end;
  return out;
}

Result<EventPage> SqliteStore::ListEvents(const EventFilter& filter, const std::string& cursor,
                                          int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // Cursors are event ids; anything else was not made here.
  std::optional<int64_t> after;
  if (!cursor.empty()) {
    after = EventKeyFromId(cursor, event_id_bits_);
    if (!after) return BadCursor();
  }
  // Only the filters in use appear in the SQL, so the planner sees plain conditions. Parameter
  // numbers are fixed; ?7 (the limit) is always present, which makes ?1..?6 valid to bind even
  // when unused.
  std::string sql = std::string("SELECT ") + kEventColumns + " FROM events e WHERE 1 = 1";
  if (!cursor.empty()) sql += " AND e.id < ?1";
  if (filter.source) sql += " AND e.source = ?2";
  // A time range is a key range of the events table (keys are time-ordered).
  if (filter.since) sql += " AND e.id >= ?3";
  if (filter.until) sql += " AND e.id < ?4";
  if (filter.type) {
    // Bytes, not characters: CAST AS BLOB makes substr and length count bytes.
    sql += TypePrefix(*filter.type)
               ? " AND length(CAST(e.type AS BLOB)) > length(CAST(?9 AS BLOB))"
                 " AND substr(CAST(e.type AS BLOB), 1, length(CAST(?9 AS BLOB))) ="
                 " CAST(?9 AS BLOB)"
               : " AND e.type = ?9";
  }
  if (filter.routed) sql += *filter.routed ? " AND e.routed = 1" : " AND e.routed = 0";
  if (filter.within) {
    sql +=
        " AND (e.source IN (SELECT value FROM json_each(?10)) OR EXISTS (SELECT 1 FROM"
        " deliveries w WHERE w.event_id = e.id AND +w.destination IN"
        " (SELECT value FROM json_each(?11))))";
  }
  if (filter.status || filter.destination) {
    // Both set: one delivery must match both (a failed delivery *to* that destination). One
    // probe of deliveries_event per event: `+d.status` keeps the planner off the status indexes,
    // which would walk every delivery in that status for each event.
    sql += " AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id";
    // Claims live in memory (?8, the leased ids): a leased delivery reads as scheduled on disk
    // but is delivering.
    if (filter.status == DeliveryStatus::kDelivering) {
      sql += " AND d.current = 1 AND d.id IN (SELECT value FROM json_each(?8))";
    } else if (filter.status == DeliveryStatus::kScheduled) {
      sql +=
          " AND +d.status IN ('pending', 'scheduled') AND d.current = 1"
          " AND d.id NOT IN (SELECT value FROM json_each(?8))";
    } else if (filter.status) {
      sql += " AND +d.status = ?5 AND d.current = 1";
    }
    if (filter.destination) sql += " AND +d.destination = ?6";
    sql += ")";
  }
  sql += " ORDER BY e.id DESC LIMIT ?7";

  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(sql);
  if (!q.ok()) return q.status();
  const std::string status =
      filter.status ? std::string(DeliveryStatusName(*filter.status)) : std::string();
  const std::string leased =
      filter.status == DeliveryStatus::kDelivering || filter.status == DeliveryStatus::kScheduled
          ? LeasedIdsJson("", true)
          : std::string("[]");
  q->BindInt(1, after.value_or(0))
      .BindOptText(2, filter.source)
      .BindInt(3, filter.since ? EventKeyFloor(*filter.since) : 0)
      .BindInt(4, filter.until ? EventKeyFloor(*filter.until) : 0)
      .BindText(5, status)
      .BindOptText(6, filter.destination)
      .BindInt(7, limit + 1);  // one more than asked tells whether a next page exists
  if (filter.status == DeliveryStatus::kDelivering || filter.status == DeliveryStatus::kScheduled) {
    q->BindText(8, leased);
  }
  if (filter.type) q->BindText(9, TypePrefix(*filter.type).value_or(*filter.type));
  // Bound without a copy: the texts must outlive the statement's steps.
  const std::string within_sources =
      filter.within ? JsonStringArray(filter.within->sources) : std::string();
  const std::string within_destinations =
      filter.within ? JsonStringArray(filter.within->destinations) : std::string();
  if (filter.within) q->BindText(10, within_sources).BindText(11, within_destinations);
  EventPage page;
  for (;;) {
    Result<bool> row = q->Step("list events");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = page.items.back().id;
      break;
    }
    Result<Event> e = ReadEvent(*q, -1, event_id_bits_);
    if (!e.ok()) return e.status();
    page.items.push_back(std::move(*e));
  }
  // Each event's current deliveries: one probe of deliveries_event per event on the page.
  Result<Statement> cur = (*db)->Prepare(
      "SELECT destination, status, chain, id FROM deliveries WHERE event_id = ?1 AND current = 1"
      " ORDER BY destination");
  if (!cur.ok()) return cur.status();
  for (Event& e : page.items) {
    cur->Reset();
    cur->BindInt(1, EventKeyFromId(e.id, event_id_bits_).value_or(0));
    for (;;) {
      Result<bool> row = cur->Step("current deliveries of " + e.id);
      if (!row.ok()) return row.status();
      if (!*row) break;
      CurrentDelivery c;
      c.destination = cur->Text(0);
      const std::string status = cur->Text(1);
      std::optional<DeliveryStatus> parsed = ParseStoredStatus(status);
      if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
      c.status = LeaseOf(cur->Int(3)) ? DeliveryStatus::kDelivering : *parsed;
      c.chain = static_cast<int>(cur->Int(2));
      e.current.push_back(std::move(c));
    }
  }
  return page;
}

}  // namespace hookrelay::store
