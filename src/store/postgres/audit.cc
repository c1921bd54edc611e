// PostgresStore (postgres_store.h): The audit trail and rejected requests.

#include "common/list_limits.h"
#include "store/paging.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg_store::InsertAudit;
using pg_store::Unit;

// ---------------------------------------------------------------------------------------------
// Audit

Status PostgresStore::AppendAudit(const AuditEntry& entry) {
  if (entry.action.empty()) return Status::InvalidArgument("audit action is empty", "action");
  return WithConn<Unit>([&](PgConn& db) -> Result<Unit> {
           HR_RETURN_IF_ERROR(InsertAudit(db, entry));
           return Unit{};
         })
      .status();
}

Result<AuditPage> PostgresStore::ListAudit(const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  HR_ASSIGN_OR_RETURN(const int64_t before, DecodeIdCursor(cursor));
  return WithConn<AuditPage>([&](PgConn& db) -> Result<AuditPage> {
    PgParams p;
    const std::string sql =
        "SELECT id, at, actor, action, target, count, detail FROM audit WHERE id < " +
        p.Int(before) + " ORDER BY id DESC LIMIT " + p.Int(limit + 1);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list audit"));
    AuditPage page;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = EncodeIdCursor(page.items.back().id);
        break;
      }
      AuditEntry e;
      e.id = r.Int(i, 0);
      e.at = r.Time(i, 1);
      e.actor = r.Text(i, 2);
      e.action = r.Text(i, 3);
      e.target = r.Text(i, 4);
      e.count = r.Int(i, 5);
      e.detail = r.Text(i, 6);
      page.items.push_back(std::move(e));
    }
    return page;
  });
}

// ---------------------------------------------------------------------------------------------
// Rejected requests

Status PostgresStore::AppendRejections(const std::vector<Rejection>& rejections,
                                       int keep_per_source) {
  HR_RETURN_IF_ERROR(CheckRejections(rejections, keep_per_source));
  if (rejections.empty()) return Status::Ok();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams p;
           std::string sql =
               "INSERT INTO rejections (source, received_at, reason, message, headers, size,"
               " sha256, remote_addr) VALUES ";
           std::set<std::string> sources;
           for (size_t i = 0; i < rejections.size(); ++i) {
             const Rejection& x = rejections[i];
             sql += (i ? ", (" : "(") + p.Text(x.source) + ", " + p.Time(x.received_at) + ", " +
                    p.Text(x.reason) + ", " + p.Text(x.message) + ", " +
                    p.Bytes(EncodeHeaders(x.headers)) + ", " + p.Int(x.size) + ", " +
                    p.Text(x.sha256) + ", " + p.Text(x.remote_addr) + ")";
             sources.insert(x.source);
           }
           HR_RETURN_IF_ERROR(db.Exec(sql, p, "append rejections").status());
           for (const std::string& source : sources) {
             // The newest row past the ones kept: it and every older one of the source go.
             PgParams q;
             const std::string s = q.Text(source);
             const std::string del = "DELETE FROM rejections WHERE source = " + s +
                                     " AND id <= (SELECT id FROM rejections WHERE source = " + s +
                                     " ORDER BY id DESC LIMIT 1 OFFSET " + q.Int(keep_per_source) +
                                     ")";
             HR_RETURN_IF_ERROR(db.Exec(del, q, "prune rejections").status());
           }
           return Unit{};
         })
      .status();
}

Result<RejectionPage> PostgresStore::ListRejections(const std::string& source,
                                                    const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  HR_ASSIGN_OR_RETURN(const int64_t before, DecodeIdCursor(cursor));
  return WithConn<RejectionPage>([&](PgConn& db) -> Result<RejectionPage> {
    PgParams p;
    const std::string sql =
        "SELECT id, source, received_at, reason, message, headers, size, sha256, remote_addr"
        " FROM rejections WHERE source = " +
        p.Text(source) + " AND id < " + p.Int(before) + " ORDER BY id DESC LIMIT " +
        p.Int(limit + 1);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list rejections"));
    RejectionPage page;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = EncodeIdCursor(page.items.back().id);
        break;
      }
      Rejection x;
      x.id = r.Int(i, 0);
      x.source = r.Text(i, 1);
      x.received_at = r.Time(i, 2);
      x.reason = r.Text(i, 3);
      x.message = r.Text(i, 4);
      HR_ASSIGN_OR_RETURN(x.headers, DecodeHeaders(r.Bytes(i, 5)));
      x.size = r.Int(i, 6);
      x.sha256 = r.Text(i, 7);
      x.remote_addr = r.Text(i, 8);
      page.items.push_back(std::move(x));
    }
    return page;
  });
}

Result<int64_t> PostgresStore::PurgeRejectionsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    PgParams p;
    const std::string sql =
        "DELETE FROM rejections WHERE id IN (SELECT id FROM rejections WHERE received_at < " +
        p.Time(cutoff) + " ORDER BY received_at LIMIT " + p.Int(batch) + ")";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "purge rejections"));
    return r.affected();
  });
}

}  // namespace hookrelay::store
