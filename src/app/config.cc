#include "app/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "alerts/alerts_config.h"
#include "catalog/tls_files.h"
#include "common/file_text.h"
#include "common/units.h"
#include "model/json_fields.h"
#include "store/open_store.h"

namespace hookrelay::app {

namespace json = boost::json;

namespace {

// Converts a TOML node to JSON, recording the line of every path ("destinations[0].policy.cap")
// so that errors from the JSON parsers can point at the file.
json::value ToJson(const toml::node& node, const std::string& path,
                   std::map<std::string, int>& lines) {
  lines[path] = static_cast<int>(node.source().begin.line);
  if (const auto* t = node.as_table()) {
    json::object o;
    for (const auto& [key, child] : *t) {
      std::string k(key.str());
      o[k] = ToJson(child, path.empty() ? k : path + "." + k, lines);
      lines[path.empty() ? k : path + "." + k] = static_cast<int>(key.source().begin.line)
                                                     ? static_cast<int>(key.source().begin.line)
                                                     : static_cast<int>(child.source().begin.line);
    }
    return o;
  }
  if (const auto* a = node.as_array()) {
    json::array arr;
    for (size_t i = 0; i < a->size(); ++i) {
      arr.push_back(ToJson((*a)[i], path + "[" + std::to_string(i) + "]", lines));
    }
    return arr;
  }
  if (const auto* s = node.as_string()) return json::value(s->get());
  if (const auto* i = node.as_integer()) return json::value(i->get());
  if (const auto* f = node.as_floating_point()) return json::value(f->get());
  if (const auto* b = node.as_boolean()) return json::value(b->get());
  std::ostringstream text;
  if (const auto* d = node.as_date()) text << d->get();
  if (const auto* tm = node.as_time()) text << tm->get();
  if (const auto* dt = node.as_date_time()) text << dt->get();
  return json::value(text.str());
}

// The line of `field` or of its nearest enclosing path.
int LineOf(const std::map<std::string, int>& lines, std::string field) {
  while (!field.empty()) {
    auto it = lines.find(field);
    if (it != lines.end() && it->second > 0) return it->second;
    size_t cut = field.find_last_of(".[");
    if (cut == std::string::npos) break;
    field.resize(cut);
  }
  return 0;
}

// [server] tls / admin_tls (`name`): { cert = "…", key = "…" }, inline or as [server.tls].
Status ParseTlsFiles(const json::value& v, const std::string& name,
                     std::optional<http::TlsFiles>& out) {
  if (!v.is_object()) {
    return Status::InvalidArgument(
        "must be a table: { cert = \"/etc/hookrelay/cert.pem\", key = \"/etc/hookrelay/key.pem\" }",
        name);
  }
  const json::object& o = v.as_object();
  if (Status known = model::CheckKnownFields(o, {"cert", "key"}); !known.ok()) {
    return known.WithFieldPrefix(name);
  }
  http::TlsFiles files;
  for (auto [key, target, what] :
       {std::tuple{"cert", &files.cert_file, "certificate (or chain) file"},
        std::tuple{"key", &files.key_file, "private key file"}}) {
    const json::value* f = o.if_contains(key);
    if (f == nullptr) {
      return Status::InvalidArgument(std::string("missing: the path of the PEM ") + what, key)
          .WithFieldPrefix(name);
    }
    auto r = model::GetString(*f, key);
    if (!r.ok()) return r.status().WithFieldPrefix(name);
    if (r->empty()) return Status::InvalidArgument("must not be empty", key).WithFieldPrefix(name);
    *target = *r;
  }
  out = std::move(files);
  return Status::Ok();
}

Status ParseServer(const json::value& v, ServerConfig& s) {
  if (!v.is_object()) return Status::InvalidArgument("must be a table", "");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(model::CheckKnownFields(
      o, {"listen", "admin_listen", "threads", "max_header", "header_timeout", "body_timeout",
          "idle_timeout", "allow_private_destinations", "max_connections",
          "max_connections_per_client", "max_body_memory", "max_body_memory_per_client",
          "allowed_hosts", "trusted_proxies", "tls", "admin_tls"}));
  if (const auto* f = o.if_contains("listen")) {
    auto r = model::GetString(*f, "listen");
    if (!r.ok()) return r.status();
    s.listen = *r;
  }
  if (const auto* f = o.if_contains("admin_listen")) {
    auto r = model::GetString(*f, "admin_listen");
    if (!r.ok()) return r.status();
    if (r->empty()) return Status::InvalidArgument("must not be empty", "admin_listen");
    s.admin_listen = *r;
  }
  if (const auto* f = o.if_contains("threads")) {
    auto r = model::GetInt(*f, "threads", 1, 64);
    if (!r.ok()) return r.status();
    s.threads = static_cast<int>(*r);
  }
  if (const auto* f = o.if_contains("max_header")) {
    auto r = model::GetByteSize(*f, "max_header");
    if (!r.ok()) return r.status();
    if (*r < 1024 || *r > (1u << 20)) {
      return Status::InvalidArgument("must be between 1KiB and 1MiB", "max_header");
    }
    s.max_header = *r;
  }
  for (auto [name, target] :
       {std::pair{"header_timeout", &s.header_timeout}, std::pair{"body_timeout", &s.body_timeout},
        std::pair{"idle_timeout", &s.idle_timeout}}) {
    if (const auto* f = o.if_contains(name)) {
      auto r = model::GetDuration(*f, name);
      if (!r.ok()) return r.status();
      if (r->count() <= 0) return Status::InvalidArgument("must be greater than 0", name);
      *target = *r;
    }
  }
  if (const auto* f = o.if_contains("allow_private_destinations")) {
    auto r = model::GetBool(*f, "allow_private_destinations");
    if (!r.ok()) return r.status();
    s.allow_private_destinations = *r;
  }
  if (const auto* f = o.if_contains("max_connections")) {
    auto r = model::GetInt(*f, "max_connections", 1, 1000000);
    if (!r.ok()) return r.status();
    s.max_connections = static_cast<int>(*r);
  }
  if (const auto* f = o.if_contains("max_connections_per_client")) {
    auto r = model::GetInt(*f, "max_connections_per_client", 0, 1000000);
    if (!r.ok()) return r.status();
    if (*r > s.max_connections) {
      return Status::InvalidArgument("must not exceed max_connections (" +
                                         std::to_string(s.max_connections) + "); 0 means no cap",
                                     "max_connections_per_client");
    }
    s.max_connections_per_client = static_cast<int>(*r);
  } else {
    s.max_connections_per_client = std::min(s.max_connections_per_client, s.max_connections);
  }
  if (const auto* f = o.if_contains("max_body_memory")) {
    auto r = model::GetByteSize(*f, "max_body_memory");
    if (!r.ok()) return r.status();
    if (*r < (64u << 10))
      return Status::InvalidArgument("must be at least 64KiB", "max_body_memory");
    s.max_body_memory = *r;
  }
  if (const auto* f = o.if_contains("max_body_memory_per_client")) {
    auto r = model::GetByteSize(*f, "max_body_memory_per_client");
    if (!r.ok()) return r.status();
    if (*r > s.max_body_memory) {
      return Status::InvalidArgument("must not exceed max_body_memory (" +
                                         FormatByteSize(s.max_body_memory) + "); 0 means no cap",
                                     "max_body_memory_per_client");
    }
    if (*r > 0 && *r < (16u << 10)) {
      return Status::InvalidArgument("must be at least 16KiB (or 0: no cap)",
                                     "max_body_memory_per_client");
    }
    s.max_body_memory_per_client = *r;
  } else {
    s.max_body_memory_per_client =
        std::min(s.max_body_memory, std::max(s.max_body_memory / 4, model::kDefaultMaxBody));
  }
  if (const auto* f = o.if_contains("allowed_hosts")) {
    if (!f->is_array()) {
      return Status::InvalidArgument(
          "must be a list of host names, as in [\"relay.example.com\", \"127.0.0.1:8080\"]",
          "allowed_hosts");
    }
    std::vector<std::string> entries;
    for (size_t i = 0; i < f->as_array().size(); ++i) {
      auto r = model::GetString(f->as_array()[i], "allowed_hosts[" + std::to_string(i) + "]");
      if (!r.ok()) return r.status();
      entries.push_back(*r);
    }
    auto hosts = AllowedHosts::Parse(entries);
    if (!hosts.ok()) return hosts.status();
    s.allowed_hosts = std::move(*hosts);
  }
  if (const auto* f = o.if_contains("trusted_proxies")) {
    if (!f->is_array()) {
      return Status::InvalidArgument(
          "must be a list of addresses or networks, as in [\"10.0.0.0/8\", \"127.0.0.1\"]",
          "trusted_proxies");
    }
    std::vector<std::string> entries;
    for (size_t i = 0; i < f->as_array().size(); ++i) {
      auto r = model::GetString(f->as_array()[i], "trusted_proxies[" + std::to_string(i) + "]");
      if (!r.ok()) return r.status();
      entries.push_back(*r);
    }
    auto proxies = http::TrustedProxies::Parse(entries);
    if (!proxies.ok()) return proxies.status();
    s.trusted_proxies = std::move(*proxies);
  }
  if (const auto* f = o.if_contains("tls")) HR_RETURN_IF_ERROR(ParseTlsFiles(*f, "tls", s.tls));
  if (const auto* f = o.if_contains("admin_tls")) {
    HR_RETURN_IF_ERROR(ParseTlsFiles(*f, "admin_tls", s.admin_tls));
    if (s.admin_listen.empty()) {
      return Status::InvalidArgument(
          "needs admin_listen: admin_tls is the TLS of the admin listener (for `listen`, use tls)",
          "admin_tls");
    }
  }
  return Status::Ok();
}

Status ParseStore(const json::value& v, StoreConfig& s) {
  if (!v.is_object()) return Status::InvalidArgument("must be a table", "");
  const json::object& o = v.as_object();
  // `url` (as the issue and --store name it); `postgres_url` is the same key's older spelling.
  HR_RETURN_IF_ERROR(
      model::CheckKnownFields(o, {"dir", "url", "postgres_url", "master_key_file", "migrate"}));
  if (const auto* f = o.if_contains("master_key_file")) {
    auto r = model::GetString(*f, "master_key_file");
    if (!r.ok()) return r.status();
    if (r->empty()) return Status::InvalidArgument("must not be empty", "master_key_file");
    s.master_key_file = *r;
  }
  if (const auto* f = o.if_contains("migrate")) {
    auto r = model::GetString(*f, "migrate");
    if (!r.ok()) return r.status();
    if (*r != "auto" && *r != "manual") {
      return Status::InvalidArgument("must be \"auto\" or \"manual\"", "migrate");
    }
    s.migrate_auto = *r == "auto";
  }
  if (const auto* f = o.if_contains("dir")) {
    auto r = model::GetString(*f, "dir");
    if (!r.ok()) return r.status();
    if (r->empty()) return Status::InvalidArgument("must not be empty", "dir");
    s.dir = *r;
  }
  if (o.contains("url") && o.contains("postgres_url")) {
    return Status::InvalidArgument("set url or postgres_url (the same setting), not both",
                                   "postgres_url");
  }
  const std::string key = o.contains("url") ? "url" : "postgres_url";
  if (const auto* f = o.if_contains(key)) {
    auto r = model::GetString(*f, key);
    if (!r.ok()) return r.status();
    auto address = store::ParseStoreAddress(*r);
    if (!address.ok() || address->kind != store::StoreAddress::Kind::kPostgres) {
      return Status::InvalidArgument("must be a postgres:// or postgresql:// URL", key);
    }
    if (o.contains("dir")) {
      return Status::InvalidArgument(
          "set dir (the embedded store) or " + key + " (PostgreSQL), not both", key);
    }
    s.postgres_url = *r;
  }
  return Status::Ok();
}

Status ParseDelivery(const json::value& v, DeliveryConfig& d) {
  if (!v.is_object()) return Status::InvalidArgument("must be a table", "");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(
      model::CheckKnownFields(o, {"lease_margin", "poll_interval", "stall_threshold"}));
  for (auto [name, target] :
       {std::pair{"lease_margin", &d.lease_margin}, std::pair{"poll_interval", &d.poll_interval},
        std::pair{"stall_threshold", &d.stall_threshold}}) {
    if (const auto* f = o.if_contains(name)) {
      auto r = model::GetDuration(*f, name);
      if (!r.ok()) return r.status();
      if (r->count() <= 0) return Status::InvalidArgument("must be greater than 0", name);
      *target = *r;
    }
  }
  return Status::Ok();
}

Status ParseRetention(const json::value& v, RetentionConfig& r) {
  if (!v.is_object()) return Status::InvalidArgument("must be a table", "");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(model::CheckKnownFields(o, {"interval", "batch"}));
  if (const auto* f = o.if_contains("interval")) {
    auto d = model::GetDuration(*f, "interval");
    if (!d.ok()) return d.status();
    if (d->count() <= 0) return Status::InvalidArgument("must be greater than 0", "interval");
    r.interval = *d;
  }
  if (const auto* f = o.if_contains("batch")) {
    auto n = model::GetInt(*f, "batch", 1, 100000);
    if (!n.ok()) return n.status();
    r.batch = static_cast<int>(*n);
  }
  return Status::Ok();
}

Status ParseTransforms(const json::value& v, TransformsConfig& t) {
  if (!v.is_object()) return Status::InvalidArgument("must be a table", "");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(model::CheckKnownFields(
      o, {"threads", "max_cpu", "max_memory", "default_cpu", "default_memory"}));
  if (const auto* f = o.if_contains("threads")) {
    HR_ASSIGN_OR_RETURN(int64_t n, model::GetInt(*f, "threads", 1, 64));
    t.threads = static_cast<int>(n);
  }
  for (auto [name, target] : {std::pair{"max_cpu", &t.max_cpu}, {"default_cpu", &t.default_cpu}}) {
    if (const auto* f = o.if_contains(name)) {
      HR_ASSIGN_OR_RETURN(Duration d, model::GetDuration(*f, name));
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d);
      if (ms.count() < 1 || ms > std::chrono::seconds(10)) {
        return Status::InvalidArgument("must be from 1ms to 10s", name);
      }
      *target = ms;
    }
  }
  for (auto [name, target] :
       {std::pair{"max_memory", &t.max_memory}, {"default_memory", &t.default_memory}}) {
    if (const auto* f = o.if_contains(name)) {
      HR_ASSIGN_OR_RETURN(uint64_t bytes, model::GetByteSize(*f, name));
      if (bytes < (1u << 20) || bytes > (1ull << 30)) {
        return Status::InvalidArgument("must be from 1MiB to 1GiB", name);
      }
      *target = bytes;
    }
  }
  if (t.default_cpu > t.max_cpu) {
    return Status::InvalidArgument("must not be above max_cpu", "default_cpu");
  }
  if (t.default_memory > t.max_memory) {
    return Status::InvalidArgument("must not be above max_memory", "default_memory");
  }
  return Status::Ok();
}

Status ParseLog(const json::value& v, LogSettings& log) {
  if (!v.is_object()) return Status::InvalidArgument("must be a table", "");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(model::CheckKnownFields(o, {"level", "format"}));
  if (const auto* f = o.if_contains("level")) {
    HR_ASSIGN_OR_RETURN(std::string text, model::GetString(*f, "level"));
    auto level = ParseLogLevel(text);
    if (!level.ok()) return Status::InvalidArgument(level.status().message(), "level");
    log.level = *level;
  }
  if (const auto* f = o.if_contains("format")) {
    HR_ASSIGN_OR_RETURN(std::string text, model::GetString(*f, "format"));
    auto format = ParseLogFormat(text);
    if (!format.ok()) return Status::InvalidArgument(format.status().message(), "format");
    log.format = *format;
  }
  return Status::Ok();
}

template <typename T, typename ParseFn>
Status ParseList(const json::object& root, const char* key, ParseFn parse, std::vector<T>& out) {
  const json::value* v = root.if_contains(key);
  if (!v) return Status::Ok();
  if (!v->is_array()) {
    return Status::InvalidArgument(std::string("must be an array of tables ([[") + key + "]])",
                                   key);
  }
  for (size_t i = 0; i < v->as_array().size(); ++i) {
    auto item = parse(v->as_array()[i]);
    if (!item.ok()) {
      return item.status().WithFieldPrefix(std::string(key) + "[" + std::to_string(i) + "]");
    }
    out.push_back(std::move(*item));
  }
  return Status::Ok();
}

Status ParseRoot(const json::object& root, Config& config) {
  HR_RETURN_IF_ERROR(
      model::CheckKnownFields(root, {"server", "store", "delivery", "retention", "transforms",
                                     "log", "alerts", "sources", "destinations", "routes"}));
  if (const auto* s = root.if_contains("server")) {
    HR_RETURN_IF_ERROR(ParseServer(*s, config.server).WithFieldPrefix("server"));
  }
  if (const auto* s = root.if_contains("store")) {
    HR_RETURN_IF_ERROR(ParseStore(*s, config.store).WithFieldPrefix("store"));
  }
  if (const auto* s = root.if_contains("delivery")) {
    HR_RETURN_IF_ERROR(ParseDelivery(*s, config.delivery).WithFieldPrefix("delivery"));
  }
  if (const auto* s = root.if_contains("transforms")) {
    HR_RETURN_IF_ERROR(ParseTransforms(*s, config.transforms).WithFieldPrefix("transforms"));
  }
  if (const auto* s = root.if_contains("retention")) {
    HR_RETURN_IF_ERROR(ParseRetention(*s, config.retention).WithFieldPrefix("retention"));
  }
  if (const auto* s = root.if_contains("log")) {
    HR_RETURN_IF_ERROR(ParseLog(*s, config.log).WithFieldPrefix("log"));
  }
  if (const auto* s = root.if_contains("alerts")) {
    auto alerts = alerts::ParseAlertsConfig(*s);
    if (!alerts.ok()) return alerts.status().WithFieldPrefix("alerts");
    config.alerts = *alerts;
    if (!config.alerts.ca_file.empty()) {
      if (Status readable = CheckReadable(config.alerts.ca_file); !readable.ok()) {
        return Status::InvalidArgument(readable.message(), "ca_file").WithFieldPrefix("alerts");
      }
    }
  }
  std::vector<model::Source> sources;
  std::vector<model::Destination> destinations;
  HR_RETURN_IF_ERROR(ParseList(root, "sources", model::ParseSource, sources));
  HR_RETURN_IF_ERROR(ParseList(root, "destinations", model::ParseDestination, destinations));
  HR_RETURN_IF_ERROR(ParseList(root, "routes", model::ParseRoute, config.catalog.routes));
  for (auto [key, kind] : {std::pair{"sources", store::CatalogKind::kSource},
                           std::pair{"destinations", store::CatalogKind::kDestination},
                           std::pair{"routes", store::CatalogKind::kRoute}}) {
    const json::value* list = root.if_contains(key);
    if (!list) continue;
    const json::array& items = list->as_array();  // ParseList checked it
    for (size_t i = 0; i < items.size(); ++i) {
      store::CatalogObject o;
      o.kind = kind;
      o.name = kind == store::CatalogKind::kSource        ? sources[i].name
               : kind == store::CatalogKind::kDestination ? destinations[i].name
                                                          : config.catalog.routes[i].id;
      o.spec = json::serialize(items[i]);
      o.origin = "config";
      config.catalog_objects.push_back(std::move(o));
    }
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    std::string name = sources[i].name;
    if (!config.catalog.sources.emplace(name, std::move(sources[i])).second) {
      return Status::InvalidArgument("duplicate source name \"" + name + "\"",
                                     "sources[" + std::to_string(i) + "].name");
    }
  }
  for (size_t i = 0; i < destinations.size(); ++i) {
    std::string name = destinations[i].name;
    if (!config.catalog.destinations.emplace(name, std::move(destinations[i])).second) {
      return Status::InvalidArgument("duplicate destination name \"" + name + "\"",
                                     "destinations[" + std::to_string(i) + "].name");
    }
  }
  for (auto& [name, source] : config.catalog.sources) source.origin = "config";
  for (auto& [name, destination] : config.catalog.destinations) destination.origin = "config";
  for (model::Route& route : config.catalog.routes) route.origin = "config";
  return config.catalog.Validate();
}

// The first string of `text` that is never closed: a "…" or '…' that reaches the end of its
// line, or a """…""" / '''…''' that reaches the end of the file. Returns the line it opens on
// (1-based) and a message, or line 0 when every string is closed. Comments are skipped; a
// backslash escapes the next character in basic strings.
std::pair<int, std::string> UnterminatedString(std::string_view text) {
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const bool multi = text.substr(i, 3) == std::string(3, c);
      const std::string quote = multi ? std::string(3, c) : std::string(1, c);
      const int opened = line;
      bool closed = false;
      size_t j = i + quote.size();
      for (; j < text.size(); ++j) {
        if (c == '"' && text[j] == '\\') {
          if (j + 1 < text.size() && text[j + 1] == '\n') ++line;
          ++j;
          continue;
        }
        if (text[j] == '\n') {
          if (!multi) break;
          ++line;
          continue;
        }
        if (text.substr(j, quote.size()) == quote) {
          closed = true;
          // A multi-line string may end in up to two more quotes ("""a""""").
          j += quote.size() - 1;
          while (multi && j + 1 < text.size() && text[j + 1] == c) ++j;
          break;
        }
      }
      if (!closed) {
        return {opened, multi ? "unterminated string: the " + quote + " opened here is never closed"
                              : "unterminated string: the " + quote +
                                    " opened here is not closed on its line (a string of one "
                                    "line; use " +
                                    std::string(3, c) + " for several)"};
      }
      i = j;
    }
  }
  return {0, ""};
}

}  // namespace

Result<Config> ParseConfig(std::string_view toml_text, const std::string& name) {
  toml::table table;
  try {
    table = toml::parse(toml_text, name);
  } catch (const toml::parse_error& e) {
    // toml++ says "Error while parsing string: unescaped control characters …" (the newline) or
    // "… encountered end-of-file" for a missing closing quote, at the line where it noticed.
    const std::string description(e.description());
    if (description.find("string") != std::string::npos) {
      auto [line, message] = UnterminatedString(toml_text);
      if (line > 0)
        return Status::InvalidArgument(name + ":" + std::to_string(line) + ": " + message);
    }
    return Status::InvalidArgument(name + ":" + std::to_string(e.source().begin.line) + ": " +
                                   description);
  }
  std::map<std::string, int> lines;
  json::value root = ToJson(table, "", lines);
  Config config;
  config.file_name = name;
  if (const json::value* ds = root.as_object().if_contains("destinations"); ds && ds->is_array()) {
    for (size_t i = 0; i < ds->get_array().size(); ++i) {
      const json::value& d = ds->get_array()[i];
      const json::value* n = d.is_object() ? d.get_object().if_contains("name") : nullptr;
      if (!n || !n->is_string()) continue;
      const std::string path = "destinations[" + std::to_string(i) + "]";
      auto& fields = config.destination_lines[std::string(n->get_string())];
      fields[""] = LineOf(lines, path);
      for (const auto& [key, value] : d.get_object()) {
        fields[std::string(key)] = LineOf(lines, path + "." + std::string(key));
      }
    }
  }
  Status st = Status::Ok();
  if (json::value* ds = root.as_object().if_contains("destinations"); ds && ds->is_array()) {
    // Files named in "tls" are read now, relative to the config file, and the catalog stores
    // their text (catalog::InlineTlsFiles).
    const std::string base =
        std::filesystem::absolute(std::filesystem::path(name)).parent_path().string();
    for (size_t i = 0; i < ds->get_array().size() && st.ok(); ++i) {
      st = catalog::InlineTlsFiles(ds->get_array()[i], base)
               .WithFieldPrefix("destinations[" + std::to_string(i) + "]");
    }
  }
  if (st.ok()) st = ParseRoot(root.as_object(), config);
  if (st.ok()) {
    // The listeners' certificate and key files, like the destinations' files above, are relative
    // to the config file's directory (so the file means the same whatever serve's working
    // directory is; systemd starts it in /).
    const std::filesystem::path base =
        std::filesystem::absolute(std::filesystem::path(name)).parent_path();
    for (std::optional<http::TlsFiles>* tls : {&config.server.tls, &config.server.admin_tls}) {
      if (!*tls) continue;
      for (std::string* file : {&(*tls)->cert_file, &(*tls)->key_file}) {
        if (std::filesystem::path(*file).is_relative()) *file = (base / *file).string();
      }
    }
  }
  if (!st.ok()) {
    int line = LineOf(lines, st.field());
    std::string where = name + (line > 0 ? ":" + std::to_string(line) : "") + ": ";
    return Status::InvalidArgument(
        where + (st.field().empty() ? "" : st.field() + ": ") + st.message(), st.field());
  }
  return config;
}

std::string Config::DestinationLocation(const std::string& name, const std::string& field) const {
  if (file_name.empty()) return "";
  int line = 0;
  if (auto d = destination_lines.find(name); d != destination_lines.end()) {
    auto f = d->second.find(field);
    line = f != d->second.end() && f->second > 0 ? f->second : 0;
    if (line == 0) {
      auto own = d->second.find("");
      line = own != d->second.end() ? own->second : 0;
    }
  }
  return file_name + (line > 0 ? ":" + std::to_string(line) : "") + ": ";
}

Result<Config> LoadConfigFile(const std::string& path) {
  // "cannot read /etc/hookrelay.toml: No such file or directory"
  Result<std::string> text = ReadFileText(path);
  if (!text.ok()) return Status::InvalidArgument("config file: " + text.status().message());
  return ParseConfig(*text, path);
}

}  // namespace hookrelay::app
