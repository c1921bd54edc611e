#include "catalog/catalog_plan.h"

#include <boost/json.hpp>
#include <map>
#include <set>

namespace hookrelay::catalog {

namespace json = boost::json;

namespace {

using Key = std::pair<store::CatalogKind, std::string>;

Key KeyOf(const store::CatalogObject& o) { return {o.kind, o.name}; }

}  // namespace

std::string Describe(store::CatalogKind kind, const std::string& name) {
  return std::string(store::CatalogKindName(kind)) + " \"" + name + "\"";
}

Result<std::string> ObjectName(store::CatalogKind kind, const json::value& spec) {
  switch (kind) {
    case store::CatalogKind::kSource: {
      auto s = model::ParseSource(spec);
      if (!s.ok()) return s.status();
      return s->name;
    }
    case store::CatalogKind::kDestination: {
      auto d = model::ParseDestination(spec);
      if (!d.ok()) return d.status();
      return d->name;
    }
    case store::CatalogKind::kRoute: {
      auto r = model::ParseRoute(spec);
      if (!r.ok()) return r.status();
      return r->id;
    }
  }
  return Status::Internal("unknown catalog kind");
}

Result<model::Catalog> BuildCatalog(const std::vector<store::CatalogObject>& objects) {
  model::Catalog catalog;
  for (const store::CatalogObject& o : objects) {
    const std::string what = "stored " + Describe(o.kind, o.name);
    boost::system::error_code ec;
    json::value spec = json::parse(o.spec, ec);
    if (ec) return Status::InvalidArgument(what + ": not JSON: " + ec.message());
    auto fail = [&what](const Status& s) {
      return Status::InvalidArgument(
          what + ": " + (s.field().empty() ? "" : s.field() + ": ") + s.message(), s.field());
    };
    switch (o.kind) {
      case store::CatalogKind::kSource: {
        auto s = model::ParseSource(spec);
        if (!s.ok()) return fail(s.status());
        s->origin = o.origin;
        catalog.sources[s->name] = std::move(*s);
        break;
      }
      case store::CatalogKind::kDestination: {
        // A destination stored before hookrelay refused framing, hop-by-hop and webhook-*
        // names in `headers` still loads: those headers are left out (the HTTP client dropped or
        // duplicated them anyway), so an upgrade never keeps the server from starting.
        if (json::object* obj = spec.if_object()) {
          if (json::value* h = obj->if_contains("headers"); h && h->is_object()) {
            json::object& headers = h->as_object();
            for (auto it = headers.begin(); it != headers.end();) {
              if (model::IsHopByHopOrFraming(it->key()) || model::IsSignatureHeader(it->key())) {
                it = headers.erase(it);
              } else {
                ++it;
              }
            }
          }
        }
        auto d = model::ParseDestination(spec);
        if (!d.ok()) return fail(d.status());
        d->origin = o.origin;
        catalog.destinations[d->name] = std::move(*d);
        break;
      }
      case store::CatalogKind::kRoute: {
        auto r = model::ParseRoute(spec);
        if (!r.ok()) return fail(r.status());
        r->origin = o.origin;
        catalog.routes.push_back(std::move(*r));
        break;
      }
    }
  }
  if (Status st = catalog.Validate(); !st.ok()) {
    return Status::InvalidArgument("catalog: " + st.field() + ": " + st.message(), st.field());
  }
  return catalog;
}

SeedPlan PlanSeed(const std::vector<store::CatalogObject>& stored,
                  const std::optional<std::vector<store::CatalogObject>>& config) {
  SeedPlan plan;
  plan.objects = stored;
  if (config) {
    std::map<Key, const store::CatalogObject*> wanted;
    for (const store::CatalogObject& c : *config) wanted[KeyOf(c)] = &c;
    std::vector<store::CatalogObject> kept;
    std::set<Key> present;
    for (store::CatalogObject& s : plan.objects) {
      auto it = wanted.find(KeyOf(s));
      if (it == wanted.end()) {
        if (s.origin == "config") {
          plan.removed.push_back(Describe(s.kind, s.name));
          plan.change.remove.push_back(KeyOf(s));
          continue;
        }
      } else {
        const store::CatalogObject& c = *it->second;
        if (s.origin != "config") {
          plan.notes.push_back("the config file's " + Describe(s.kind, s.name) +
                               " replaces the one created through the API");
        }
        if (s.origin != "config" || s.spec != c.spec) {
          plan.updated.push_back(Describe(s.kind, s.name));
          s.spec = c.spec;
          s.origin = "config";
          plan.change.put.push_back(s);
        }
      }
      present.insert(KeyOf(s));
      kept.push_back(std::move(s));
    }
    for (const store::CatalogObject& c : *config) {
      if (present.count(KeyOf(c))) continue;
      store::CatalogObject o = c;
      o.origin = "config";
      plan.added.push_back(Describe(o.kind, o.name));
      plan.change.put.push_back(o);
      present.insert(KeyOf(o));
      kept.push_back(std::move(o));
    }
    plan.objects = std::move(kept);
  }
  // Routes created through the API whose ends are gone (removed from the config file) go too:
  // they could never deliver anything, and they would make the catalog invalid.
  std::set<std::string> sources, destinations;
  for (const store::CatalogObject& o : plan.objects) {
    if (o.kind == store::CatalogKind::kSource) sources.insert(o.name);
    if (o.kind == store::CatalogKind::kDestination) destinations.insert(o.name);
  }
  std::vector<store::CatalogObject> valid;
  for (store::CatalogObject& o : plan.objects) {
    if (o.kind == store::CatalogKind::kRoute && o.origin == "api") {
      boost::system::error_code ec;
      json::value spec = json::parse(o.spec, ec);
      auto route =
          ec ? Result<model::Route>(Status::InvalidArgument("not JSON")) : model::ParseRoute(spec);
      if (route.ok()) {
        std::string missing;
        if (!sources.count(route->source)) {
          missing = "source \"" + route->source + "\"";
        } else if (!destinations.count(route->destination)) {
          missing = "destination \"" + route->destination + "\"";
        }
        if (!missing.empty()) {
          plan.notes.push_back(Describe(o.kind, o.name) +
                               " (created through the API) removed: its " + missing +
                               " no longer exists");
          plan.removed.push_back(Describe(o.kind, o.name));
          plan.change.remove.push_back(KeyOf(o));
          continue;
        }
      }
    }
    valid.push_back(std::move(o));
  }
  plan.objects = std::move(valid);
  return plan;
}

json::value MergePatch(const json::value& target, const json::value& patch) {
  if (!patch.is_object()) return patch;
  json::object result = target.is_object() ? target.get_object() : json::object();
  for (const auto& kv : patch.get_object()) {
    if (kv.value().is_null()) {
      result.erase(kv.key());
    } else if (const json::value* existing = result.if_contains(kv.key())) {
      result[kv.key()] = MergePatch(*existing, kv.value());
    } else {
      result[kv.key()] = MergePatch(json::value(), kv.value());
    }
  }
  return result;
}

}  // namespace hookrelay::catalog
