#include "catalog/catalog_service.h"

#include <spdlog/spdlog.h>

#include <boost/json.hpp>

namespace hookrelay::catalog {

namespace json = boost::json;

namespace {

constexpr std::string_view kAction = "config_change";

json::array Strings(const std::vector<std::string>& v) {
  json::array a;
  for (const std::string& s : v) a.emplace_back(s);
  return a;
}

}  // namespace

CatalogService::CatalogService(store::Store& store, model::Registry& registry, const Clock& clock,
                               std::function<void()> on_change)
    : store_(store),
      registry_(registry),
      clock_(clock),
      on_change_(std::move(on_change)),
      // Real time: the poll is a fallback for a lost notification, not part of any decision.
      refresher_("hr-catalog", SystemClock::Instance()) {}

CatalogService::~CatalogService() { Stop(); }

Result<std::vector<std::string>> CatalogService::Load(
    const std::optional<std::vector<store::CatalogObject>>& config_objects) {
  MutexLock lock(mu_);
  for (int attempt = 1;; ++attempt) {
    // The version first: a change committed between the two reads makes the list newer than the
    // version, which only costs a reload later, never a missed change.
    auto version = store_.CatalogVersion();
    if (!version.ok()) return version.status();
    auto stored = store_.ListCatalog();
    if (!stored.ok()) return stored.status();
    SeedPlan plan = PlanSeed(*stored, config_objects);
    auto catalog = BuildCatalog(plan.objects);
    if (!catalog.ok()) return catalog.status();
    int64_t loaded = *version;
    if (!plan.change.put.empty() || !plan.change.remove.empty()) {
      store::AuditEntry e;
      e.at = clock_.Now();
      e.actor = "config";
      e.action = std::string(kAction);
      e.target = "config file";
      e.count = static_cast<int64_t>(plan.added.size() + plan.updated.size() + plan.removed.size());
      e.detail = json::serialize(json::object{{"added", Strings(plan.added)},
                                              {"updated", Strings(plan.updated)},
                                              {"removed", Strings(plan.removed)}});
      plan.change.audit = std::move(e);
      plan.change.if_version = *version;
      Status st = store_.ApplyCatalogChange(plan.change);
      if (st.code() == Status::Code::kUnavailable && attempt < 5) {
        // Another node (starting with the same file, or through its API) changed the catalog
        // since it was read: plan again on what it wrote.
        auto now = store_.CatalogVersion();
        if (now.ok() && *now != *version) continue;
      }
      HR_RETURN_IF_ERROR(st);
      loaded = *version + 1;
      plan.notes.push_back("catalog: from the config file " + std::to_string(plan.added.size()) +
                           " added, " + std::to_string(plan.updated.size()) + " updated, " +
                           std::to_string(plan.removed.size()) + " removed");
    }
    HR_RETURN_IF_ERROR(registry_.Replace(std::move(*catalog)));
    objects_ = std::move(plan.objects);
    version_ = loaded;
    return plan.notes;
  }
}

Result<bool> CatalogService::Refresh() {
  MutexLock lock(mu_);
  return RefreshLocked();
}

Result<bool> CatalogService::RefreshLocked() {
  auto version = store_.CatalogVersion();
  if (!version.ok()) return version.status();
  if (*version == version_) return false;
  auto stored = store_.ListCatalog();
  if (!stored.ok()) return stored.status();
  auto catalog = BuildCatalog(*stored);
  if (!catalog.ok()) {
    if (failed_version_ != *version) {
      failed_version_ = *version;
      spdlog::error(
          "catalog: version {} in the store cannot be installed ({}); keeping version {} (was it "
          "written by a newer hookrelay on another node?)",
          *version, catalog.status().ToString(), version_);
    }
    return catalog.status();
  }
  HR_RETURN_IF_ERROR(registry_.Replace(std::move(*catalog)));
  spdlog::info("catalog: reloaded version {} (was {}): changed through another node", *version,
               version_);
  objects_ = std::move(*stored);
  version_ = *version;
  if (on_change_) on_change_();
  return true;
}

int64_t CatalogService::version() const {
  MutexLock lock(mu_);
  return version_;
}

void CatalogService::Start(Duration poll) {
  refresher_.Start([this, poll] {
    // A store that does not answer is said by /readyz and ingest; the next round tries again.
    (void)Refresh();
    return poll;
  });
}

void CatalogService::Stop() { refresher_.Stop(); }

void CatalogService::Notify() { refresher_.RunNow(); }

const store::CatalogObject* CatalogService::Find(store::CatalogKind kind,
                                                 const std::string& name) const {
  for (const store::CatalogObject& o : objects_) {
    if (o.kind == kind && o.name == name) return &o;
  }
  return nullptr;
}

Status CatalogService::RefuseConfigOwned(const store::CatalogObject& o,
                                         std::string_view verb) const {
  if (o.origin != "config") return Status::Ok();
  return Status::FailedPrecondition(
      Describe(o.kind, o.name) + " is defined in the config file; " + std::string(verb) +
      " it there and restart hookrelay (the next start would undo an API change to it)");
}

Result<std::string> CatalogService::Create(store::CatalogKind kind, const json::value& body,
                                           const std::string& actor) {
  if (!body.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  auto name = ObjectName(kind, body);
  if (!name.ok()) return name.status();
  MutexLock lock(mu_);
  if (Find(kind, *name)) {
    return Status::AlreadyExists(Describe(kind, *name) + " already exists");
  }
  if (kind == store::CatalogKind::kRoute) {
    auto route = model::ParseRoute(body);
    if (!route.ok()) return route.status();
    // A new route's id is typed in URLs and shells: the names' characters only.
    if (body.as_object().contains("id")) HR_RETURN_IF_ERROR(model::ValidateRouteId(route->id));
    if (route->transform && transform_check_) {
      HR_RETURN_IF_ERROR(transform_check_(*route->transform));
    }
    std::shared_ptr<const model::Catalog> live = registry_.Get();
    if (!live->FindSource(route->source)) {
      return Status::InvalidArgument("no source \"" + route->source + "\"", "source");
    }
    if (!live->FindDestination(route->destination)) {
      return Status::InvalidArgument("no destination \"" + route->destination + "\"",
                                     "destination");
    }
    for (const model::Route& r : live->routes) {
      if (r.source == route->source && r.destination == route->destination) {
        return Status::AlreadyExists("a route from \"" + r.source + "\" to \"" + r.destination +
                                     "\" already exists (id \"" + r.id + "\")");
      }
    }
  }
  if (kind == store::CatalogKind::kDestination) {
    auto d = model::ParseDestination(body);
    if (!d.ok()) return d.status();
    if (destination_check_) HR_RETURN_IF_ERROR(destination_check_(*d));
    if (d->transform && transform_check_) HR_RETURN_IF_ERROR(transform_check_(*d->transform));
  }
  store::CatalogObject o;
  o.kind = kind;
  o.name = *name;
  o.spec = json::serialize(body);
  o.origin = "api";
  std::vector<store::CatalogObject> objects = objects_;
  objects.push_back(o);
  store::CatalogChange change;
  change.put.push_back(std::move(o));
  HR_RETURN_IF_ERROR(
      Commit(std::move(objects), std::move(change), actor, "create", kind, *name, {}));
  return *name;
}

Status CatalogService::Update(store::CatalogKind kind, const std::string& name,
                              const json::value& patch, const std::string& actor) {
  if (!patch.is_object()) {
    return Status::InvalidArgument("the body must be a JSON object (a JSON merge patch)");
  }
  if (const json::value* n = patch.get_object().if_contains("name")) {
    if (!n->is_string() || n->get_string() != name) {
      return Status::InvalidArgument("cannot be changed; create a new " +
                                         std::string(store::CatalogKindName(kind)) +
                                         " and delete this one",
                                     "name");
    }
  }
  MutexLock lock(mu_);
  const store::CatalogObject* existing = Find(kind, name);
  if (!existing) return Status::NotFound(Describe(kind, name) + " does not exist");
  HR_RETURN_IF_ERROR(RefuseConfigOwned(*existing, "change"));
  boost::system::error_code ec;
  json::value current = json::parse(existing->spec, ec);
  if (ec) return Status::Internal("stored " + Describe(kind, name) + " is not JSON");
  json::value merged = MergePatch(current, patch);
  auto parsed = ObjectName(kind, merged);
  if (!parsed.ok()) return parsed.status();
  if (kind == store::CatalogKind::kRoute) {
    // A filter, its types and its transform are values, not objects to merge: a patch replaces
    // each whole (so a filter may hold null, which a merge patch would read as "remove").
    for (const char* field : {"types", "filter", "transform"}) {
      const json::value* given = patch.get_object().if_contains(field);
      if (!given) continue;
      if (given->is_null()) {
        merged.as_object().erase(field);
      } else {
        merged.as_object()[field] = *given;
      }
    }
    // Its rule (types, filter) changes; what it connects is what it is.
    for (const char* field : {"id", "source", "destination"}) {
      const json::value* was = current.as_object().if_contains(field);
      const json::value* now = merged.as_object().if_contains(field);
      if ((was == nullptr) != (now == nullptr) || (was && *was != *now)) {
        return Status::InvalidArgument("cannot be changed; create a new route and delete this one",
                                       field);
      }
    }
    auto r = model::ParseRoute(merged);
    if (!r.ok()) return r.status();
    if (r->transform && transform_check_ && patch.get_object().contains("transform")) {
      HR_RETURN_IF_ERROR(transform_check_(*r->transform));
    }
  }
  if (kind == store::CatalogKind::kDestination) {
    // Checked here, so that an error names the field as a POST's would (not "stored …").
    auto d = model::ParseDestination(merged);
    if (!d.ok()) return d.status();
    if (destination_check_ &&
        (patch.get_object().contains("url") || patch.get_object().contains("allow_private"))) {
      HR_RETURN_IF_ERROR(destination_check_(*d));
    }
    if (d->transform && transform_check_ && patch.get_object().contains("transform")) {
      HR_RETURN_IF_ERROR(transform_check_(*d->transform));
    }
  }
  store::CatalogObject updated = *existing;
  updated.spec = json::serialize(merged);
  std::vector<store::CatalogObject> objects = objects_;
  for (store::CatalogObject& o : objects) {
    if (o.kind == kind && o.name == name) o = updated;
  }
  json::array fields;  // which fields changed, never their values (they may be secrets)
  for (const auto& kv : patch.get_object()) fields.emplace_back(kv.key());
  store::CatalogChange change;
  change.put.push_back(std::move(updated));
  return Commit(std::move(objects), std::move(change), actor, "update", kind, name,
                json::object{{"fields", std::move(fields)}});
}

Status CatalogService::Remove(store::CatalogKind kind, const std::string& name,
                              const std::string& actor) {
  MutexLock lock(mu_);
  const store::CatalogObject* existing = Find(kind, name);
  if (!existing) return Status::NotFound(Describe(kind, name) + " does not exist");
  HR_RETURN_IF_ERROR(RefuseConfigOwned(*existing, "delete"));
  if (kind != store::CatalogKind::kRoute) {
    std::string routes;
    for (const model::Route& r : registry_.Get()->routes) {
      const std::string& end = kind == store::CatalogKind::kSource ? r.source : r.destination;
      if (end == name) routes += (routes.empty() ? "\"" : ", \"") + r.id + "\"";
    }
    if (!routes.empty()) {
      return Status::FailedPrecondition(Describe(kind, name) + " is still routed (" + routes +
                                        "); delete those routes first");
    }
  }
  std::vector<store::CatalogObject> objects;
  for (const store::CatalogObject& o : objects_) {
    if (!(o.kind == kind && o.name == name)) objects.push_back(o);
  }
  store::CatalogChange change;
  change.remove.emplace_back(kind, name);
  if (kind != store::CatalogKind::kDestination) {
    return Commit(std::move(objects), std::move(change), actor, "delete", kind, name, {});
  }
  // Deliveries not final yet would be stranded. Checked in the delete's own transaction, so a
  // replay adding one just before cannot slip between the check and the delete.
  change.require_no_open_deliveries = {name};
  Status st = Commit(std::move(objects), std::move(change), actor, "delete", kind, name, {});
  if (st.code() != Status::Code::kFailedPrecondition) return st;
  return Status::FailedPrecondition(
      st.message() +
      " (scheduled, delivering or paused); deleting it would strand them. Wait until they finish "
      "(resume it if it is paused), then delete it");
}

Status CatalogService::Commit(std::vector<store::CatalogObject> objects,
                              store::CatalogChange change, const std::string& actor,
                              const std::string& op, store::CatalogKind kind,
                              const std::string& name, json::object detail) {
  auto catalog = BuildCatalog(objects);
  if (!catalog.ok()) return catalog.status();
  store::AuditEntry e;
  e.at = clock_.Now();
  e.actor = actor;
  e.action = std::string(kAction);
  e.target = std::string(store::CatalogKindName(kind)) + " " + name;
  e.count = 1;
  detail["op"] = op;
  detail["kind"] = store::CatalogKindName(kind);
  detail["name"] = name;
  e.detail = json::serialize(detail);
  change.audit = std::move(e);
  change.if_version = version_;
  if (Status st = store_.ApplyCatalogChange(change); !st.ok()) {
    // Refused because another node changed the catalog since it was loaded (or the store is
    // away): load what is stored, so that the caller's retry is checked against it.
    if (st.code() == Status::Code::kUnavailable) (void)RefreshLocked();
    return st;
  }
  HR_RETURN_IF_ERROR(registry_.Replace(std::move(*catalog)));
  objects_ = std::move(objects);
  ++version_;
  if (on_change_) on_change_();
  return Status::Ok();
}

}  // namespace hookrelay::catalog
