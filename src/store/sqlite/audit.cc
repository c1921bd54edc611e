// SqliteStore: the audit trail and the rejections.

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
#include "store/paging.h"
#include "store/row_codec.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/statements.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

Status SqliteStore::AppendAudit(const AuditEntry& entry) {
  if (entry.action.empty()) return Status::InvalidArgument("audit action is empty", "action");
  Result<Unit> r = Write<Unit>([&entry](Connection& db) -> Result<Unit> {
    HR_RETURN_IF_ERROR(InsertAudit(db, entry));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<AuditPage> SqliteStore::ListAudit(const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // The cursor is the id of the last entry of the previous page, in decimal.
  Result<int64_t> decoded = DecodeIdCursor(cursor);
  if (!decoded.ok()) return decoded.status();
  const int64_t before = *decoded;
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT id, at, actor, action, target, count, detail FROM audit"
      " WHERE id < ?1 ORDER BY id DESC LIMIT ?2");
  if (!q.ok()) return q.status();
  q->BindInt(1, before).BindInt(2, limit + 1);  // one more than asked: is there a next page?
  AuditPage page;
  for (;;) {
    Result<bool> row = q->Step("list audit");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = EncodeIdCursor(page.items.back().id);
      break;
    }
    AuditEntry e;
    e.id = q->Int(0);
    e.at = q->Time(1);
    e.actor = q->Text(2);
    e.action = q->Text(3);
    e.target = q->Text(4);
    e.count = q->Int(5);
    e.detail = q->Text(6);
    page.items.push_back(std::move(e));
  }
  return page;
}

Status SqliteStore::AppendRejections(const std::vector<Rejection>& rejections,
                                     int keep_per_source) {
  HR_RETURN_IF_ERROR(CheckRejections(rejections, keep_per_source));
  if (rejections.empty()) return Status::Ok();
  Result<Unit> r = Write<Unit>([&rejections, keep_per_source](Connection& db) -> Result<Unit> {
    std::set<std::string> sources;
    for (const Rejection& x : rejections) {
      Result<Statement> ins = db.Prepare(
          "INSERT INTO rejections(source, received_at, reason, message, headers, size, sha256,"
          " remote_addr) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
      if (!ins.ok()) return ins.status();
      const std::string headers = EncodeHeaders(x.headers);
      ins->BindText(1, x.source)
          .BindTime(2, x.received_at)
          .BindText(3, x.reason)
          .BindText(4, x.message)
          .BindBlob(5, headers)
          .BindInt(6, x.size)
          .BindText(7, x.sha256)
          .BindText(8, x.remote_addr);
      HR_RETURN_IF_ERROR(ins->Exec("append rejection"));
      sources.insert(x.source);
    }
    for (const std::string& source : sources) {
      // The id of the newest row past the ones kept: it and every older one go (a range of
      // rejections_source). No such row: nothing to delete (id <= NULL is never true).
      Result<Statement> del = db.Prepare(
          "DELETE FROM rejections WHERE source = ?1 AND id <= (SELECT id FROM rejections"
          " WHERE source = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)");
      if (!del.ok()) return del.status();
      del->BindText(1, source).BindInt(2, keep_per_source);
      HR_RETURN_IF_ERROR(del->Exec("prune rejections"));
    }
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<RejectionPage> SqliteStore::ListRejections(const std::string& source,
                                                  const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // The cursor is the id of the last row of the previous page, in decimal.
  Result<int64_t> decoded = DecodeIdCursor(cursor);
  if (!decoded.ok()) return decoded.status();
  const int64_t before = *decoded;
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT id, source, received_at, reason, message, headers, size, sha256, remote_addr"
      " FROM rejections WHERE source = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3");
  if (!q.ok()) return q.status();
  q->BindText(1, source).BindInt(2, before).BindInt(3, limit + 1);
  RejectionPage page;
  for (;;) {
    Result<bool> row = q->Step("list rejections");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = EncodeIdCursor(page.items.back().id);
      break;
    }
    Rejection x;
    x.id = q->Int(0);
    x.source = q->Text(1);
    x.received_at = q->Time(2);
    x.reason = q->Text(3);
    x.message = q->Text(4);
    HR_ASSIGN_OR_RETURN(x.headers, DecodeHeaders(q->Blob(5)));
    x.size = q->Int(6);
    x.sha256 = q->Text(7);
    x.remote_addr = q->Text(8);
    page.items.push_back(std::move(x));
  }
  return page;
}

}  // namespace hookrelay::store
