#include "cli/catalog_edit.h"

#include <boost/json.hpp>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <tuple>

#include "cli/args.h"
#include "cli/management_command.h"
#include "cli/render.h"
#include "cli/terminal.h"
#include "common/clock.h"
#include "common/file_text.h"
#include "delivery/ssrf.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

// --spec: a JSON object, given inline or as @FILE.
Result<json::object> SpecObject(const std::string& spec) {
  if (spec.empty()) return json::object();
  auto text = ReadValueArg(spec, "--spec");
  if (!text.ok()) return text.status();
  boost::system::error_code ec;
  json::value v = json::parse(*text, ec);
  if (ec) return Status::InvalidArgument("--spec: not JSON: " + ec.message(), "--spec");
  if (!v.is_object()) return Status::InvalidArgument("--spec: must be a JSON object", "--spec");
  return std::move(v.get_object());
}

json::object& SubObject(json::object& o, std::string_view key) {
  json::value& v = o[key];
  if (!v.is_object()) v = json::object();
  return v.get_object();
}

Status NothingToChange(const json::object& body, bool update) {
  if (update && body.empty()) {
    return Status::InvalidArgument("nothing to change: give a flag (see --help) or --spec");
  }
  return Status::Ok();
}

std::string Plural(const std::string& kind) { return kind + "s"; }

// The API's refusal of a private address names its JSON field; the CLI's switch is a flag.
Status NameCliSwitches(const Status& status) {
  std::string message = status.message();
  const std::string_view api_hint = delivery::kApiPrivateAddressHint;
  size_t at = message.find(api_hint);
  if (at == std::string::npos) return status;
  message.replace(at, api_hint.size(), " (pass --allow-private to allow it)");
  return Status::InvalidArgument(std::move(message), status.field());  // a 400
}

// `<kind>s add|update`: builds the body from the flags, POSTs or PATCHes it, prints the object.
template <typename Flags>
void AddWrite(
    Command parent, const std::string& kind, bool update,
    const std::function<void(Command, Flags&)>& add_flags,
    const std::function<Result<json::object>(const std::string&, const Flags&, bool)>& build,
    const std::function<std::string(const json::object&)>& render, int& exit_code) {
  auto common = std::make_shared<ManagementOptions>();
  auto name = std::make_shared<std::string>();
  auto flags = std::make_shared<Flags>();
  Command cmd = parent.Subcommand(
      update ? "update" : "add",
      update ? "Change a " + kind + " created through the API (only the flags given)"
             : "Create a " + kind + " (stored; it survives restarts)");
  cmd.Add("name", *name, kind + " name").Required();
  add_flags(cmd, *flags);
  AddManagementOptions(cmd, *common, /*has_destination_url=*/kind == "destination");
  cmd.Callback([=, &exit_code] {
    const std::string command = Plural(kind) + (update ? " update" : " add");
    ApiClient client = MakeClient(*common);  // first: an API address mixed up with --url
    auto body = build(*name, *flags, update);
    if (!body.ok()) {
      std::cerr << "hookrelay " << command << ": " << body.status().message() << "\n";
      exit_code = 2;
      return;
    }
    auto answer = update
                      ? client.Patch("/api/v1/" + Plural(kind) + "/" + PercentEncode(*name), *body)
                      : client.Post("/api/v1/" + Plural(kind), *body);
    if (!answer.ok()) answer = NameCliSwitches(answer.status());
    exit_code = PrintApiObject(command, answer, common->json, [&](const json::object& o) {
      return std::string(update ? "Updated " : "Created ") + kind + " " + *name + "\n\n" +
             render(o);
    });
  });
}

// `<kind>s rm NAME`: DELETE, then "Deleted <kind> NAME".
void AddRemove(Command parent, const std::string& kind, int& exit_code) {
  auto common = std::make_shared<ManagementOptions>();
  auto name = std::make_shared<std::string>();
  Command cmd = parent.Subcommand("rm", "Delete a " + kind + " created through the API");
  cmd.Add("name", *name, kind == "route" ? "route id" : kind + " name").Required();
  AddManagementOptions(cmd, *common);
  cmd.Callback([=, &exit_code] {
    ApiClient client = MakeClient(*common);
    exit_code = PrintApiObject(
        Plural(kind) + " rm", client.Delete("/api/v1/" + Plural(kind) + "/" + PercentEncode(*name)),
        common->json, [&](const json::object&) { return "Deleted " + kind + " " + *name + "\n"; });
  });
}

void AddSourceFlags(Command cmd, SourceFlags& f) {
  cmd.Add("--verify", f.verify, "Signature scheme: github, stripe, shopify, standard, hmac");
  cmd.Add("--secret", f.secrets,
          "Verification secret (repeat while rotating; @FILE or @- reads it)");
  cmd.Add("--dedup-header", f.dedup_header,
          "Header naming a provider's retry, e.g. "
          "X-GitHub-Delivery");
  cmd.Add("--dedup-json", f.dedup_json, "Top-level JSON field naming a retry, e.g. id");
  cmd.Add("--max-body", f.max_body, "Largest body accepted, e.g. 1MiB (default 5MiB)");
  cmd.Add("--spec", f.spec, "The whole source as JSON (or @FILE); flags go over it");
}

// The destination's URL is --url in `add` and `update` (`add` also takes it positionally); the
// API's address is --server, so the two cannot be mistaken.
void AddDestinationFlags(Command cmd, DestinationFlags& f) {
  if (cmd.Name() == "add") {
    cmd.Add("url", f.url,
            "Where deliveries go (http(s)://, or redis:// for --kind redis); or --url");
    cmd.Add("--url", f.url_flag, "Where deliveries go (http(s)://, or redis:// for --kind redis)");
  } else {
    cmd.Add("--url", f.url_flag, "The destination's new URL (of the destination's kind)");
    cmd.Add("--endpoint", f.endpoint).Hidden();  // the old name of --url
  }
  cmd.Add("--kind", f.kind,
          "What carries the deliveries: http (the default) or redis (XADD to a stream)");
  cmd.Add("--stream", f.stream, "Kind redis: the stream's key");
  cmd.Add("--maxlen", f.maxlen, "Kind redis: trim the stream to about this many entries");
  cmd.Add("--policy", f.policy, "Retry policy: a preset name or a policy JSON object");
  cmd.Add("--header", f.headers,
          "Header sent with every delivery, \"Name: value\" "
          "(repeatable; @FILE or @- reads the value)");
  cmd.Add("--signing-secret", f.signing_secret,
          "Standard Webhooks secret whsec_… (@FILE or @- reads it)");
  cmd.Add("--max-concurrency", f.max_concurrency, "Requests in flight at most");
  cmd.Add("--rate-limit", f.rate_limit, "e.g. 100/s");
  cmd.Add("--replay-window", f.replay_window,
          "How long failed events stay replayable, "
          "e.g. 30d");
  cmd.Flag("--allow-private", f.allow_private,
           "Allow a loopback or private address for this destination");
  cmd.Add("--forward-headers", f.forward_headers,
          "Received headers sent on: all (default), none, or names such as "
          "X-GitHub-Event,X-Request-Id");
  cmd.Add("--secret-header", f.secret_headers,
          "A header (of --header) whose value is a secret, shown redacted (repeatable)");
  cmd.Add("--client-cert", f.client_cert,
          "PEM file of the client certificate (and intermediates) for TLS; read here "
          "and stored by the server");
  cmd.Add("--client-key", f.client_key,
          "PEM file of the client certificate's key (unencrypted; write-only)");
  cmd.Add("--ca-file", f.ca_file,
          "PEM file of the CA(s) to trust for the destination's server instead of the "
          "system's");
  cmd.Add("--bearer", f.bearer,
          "Token sent as \"Authorization: Bearer …\" (write-only; @FILE or @- reads it)");
  cmd.Add("--basic", f.basic,
          "\"user:password\" sent as basic authentication (write-only; @FILE or @- reads "
          "it)");
  cmd.Add("--spec", f.spec, "The whole destination as JSON (or @FILE); flags go over it");
}

}  // namespace

Result<std::string> ReadValueArg(const std::string& value, const std::string& flag) {
  if (value.size() < 2 || value[0] != '@') return value;
  const std::string path = value.substr(1);
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    Result<std::string> file = ReadFileText(path);
    if (!file.ok()) return Status::InvalidArgument(flag + ": " + file.status().message(), flag);
    text = std::move(*file);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

Result<json::object> BuildSourceBody(const std::string& name, const SourceFlags& flags,
                                     bool update) {
  auto body = SpecObject(flags.spec);
  if (!body.ok()) return body.status();
  if (!update) (*body)["name"] = name;
  if (!flags.verify.empty()) SubObject(*body, "verify")["scheme"] = flags.verify;
  if (!flags.secrets.empty()) {
    json::array secrets;
    for (const std::string& s : flags.secrets) {
      auto secret = ReadValueArg(s, "--secret");
      if (!secret.ok()) return secret.status();
      secrets.emplace_back(*secret);
    }
    SubObject(*body, "verify")["secrets"] = std::move(secrets);
  }
  if (!flags.dedup_header.empty() && !flags.dedup_json.empty()) {
    return Status::InvalidArgument("give --dedup-header or --dedup-json, not both");
  }
  if (!flags.dedup_header.empty() || !flags.dedup_json.empty()) {
    json::object dedup;
    const bool header = !flags.dedup_header.empty();
    dedup[header ? "header" : "json"] = header ? flags.dedup_header : flags.dedup_json;
    if (update) dedup[header ? "json" : "header"] = nullptr;  // a merge patch: drop the other
    (*body)["dedup"] = std::move(dedup);
  }
  if (!flags.max_body.empty()) (*body)["max_body"] = flags.max_body;
  HR_RETURN_IF_ERROR(NothingToChange(*body, update));
  return body;
}

Result<json::object> BuildDestinationBody(const std::string& name, const DestinationFlags& flags,
                                          bool update) {
  auto body = SpecObject(flags.spec);
  if (!body.ok()) return body.status();
  if (!update) (*body)["name"] = name;
  std::string url;
  for (const std::string* given : {&flags.url, &flags.url_flag, &flags.endpoint}) {
    if (given->empty()) continue;
    if (!url.empty() && url != *given) {
      return Status::InvalidArgument("the destination's URL is given twice: give it once (--url)",
                                     "--url");
    }
    url = *given;
  }
  if (!url.empty()) (*body)["url"] = url;
  if (!update && url.empty() && !body->contains("url")) {
    return Status::InvalidArgument(
        "give the destination's URL: `destinations add NAME URL` or --url URL", "--url");
  }
  if (!flags.policy.empty()) {
    if (flags.policy.front() == '{') {
      boost::system::error_code ec;
      json::value p = json::parse(flags.policy, ec);
      if (ec) return Status::InvalidArgument("--policy: not JSON: " + ec.message(), "--policy");
      (*body)["policy"] = std::move(p);
    } else {
      (*body)["policy"] = flags.policy;
    }
  }
  for (const std::string& h : flags.headers) {
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::InvalidArgument("--header: \"" + h + "\" is not \"Name: value\"", "--header");
    }
    std::string value = h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    auto read = ReadValueArg(value, "--header");
    if (!read.ok()) return read.status();
    SubObject(*body, "headers")[h.substr(0, colon)] = *read;
  }
  if (!flags.signing_secret.empty()) {
    auto secret = ReadValueArg(flags.signing_secret, "--signing-secret");
    if (!secret.ok()) return secret.status();
    (*body)["signing_secret"] = *secret;
  }
  for (auto [flag, value, field] : {std::tuple{"--client-cert", &flags.client_cert, "client_cert"},
                                    std::tuple{"--client-key", &flags.client_key, "client_key"},
                                    std::tuple{"--ca-file", &flags.ca_file, "ca_file"}}) {
    if (value->empty()) continue;
    // The whole file (a PEM's last newline included), read on this machine.
    const std::string path = (*value)[0] == '@' ? value->substr(1) : *value;
    Result<std::string> file = ReadFileText(path);
    if (!file.ok()) {
      return Status::InvalidArgument(std::string(flag) + ": " + file.status().message(), flag);
    }
    SubObject(*body, "tls")[field] = std::move(*file);
  }
  if (!flags.bearer.empty() && !flags.basic.empty()) {
    return Status::InvalidArgument("give one of --bearer and --basic", "--bearer");
  }
  if (!flags.bearer.empty()) {
    auto token = ReadValueArg(flags.bearer, "--bearer");
    if (!token.ok()) return token.status();
    (*body)["auth"] = json::object{{"bearer", *token}, {"basic", nullptr}};
  }
  if (!flags.basic.empty()) {
    auto pair = ReadValueArg(flags.basic, "--basic");
    if (!pair.ok()) return pair.status();
    const size_t colon = pair->find(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument("--basic: must be \"user:password\"", "--basic");
    }
    (*body)["auth"] = json::object{
        {"basic", {{"username", pair->substr(0, colon)}, {"password", pair->substr(colon + 1)}}},
        {"bearer", nullptr}};
  }
  if (!flags.kind.empty()) (*body)["kind"] = flags.kind;
  if (!flags.stream.empty()) (*body)["stream"] = flags.stream;
  if (flags.maxlen) (*body)["maxlen"] = *flags.maxlen;
  if (flags.max_concurrency) (*body)["max_concurrency"] = *flags.max_concurrency;
  if (!flags.rate_limit.empty()) (*body)["rate_limit"] = flags.rate_limit;
  if (!flags.replay_window.empty()) (*body)["replay_window"] = flags.replay_window;
  if (flags.allow_private) (*body)["allow_private"] = true;
  if (!flags.forward_headers.empty()) {
    if (flags.forward_headers == "all" || flags.forward_headers == "none") {
      (*body)["forward_headers"] = flags.forward_headers;
    } else {
      json::array names;
      size_t start = 0;
      while (start <= flags.forward_headers.size()) {
        size_t comma = flags.forward_headers.find(',', start);
        if (comma == std::string::npos) comma = flags.forward_headers.size();
        std::string name = flags.forward_headers.substr(start, comma - start);
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (!name.empty()) names.emplace_back(name);
        start = comma + 1;
      }
      if (names.empty()) {
        return Status::InvalidArgument(
            "--forward-headers: give all, none, or header names separated by commas",
            "--forward-headers");
      }
      (*body)["forward_headers"] = std::move(names);
    }
  }
  if (!flags.secret_headers.empty()) {
    json::array names;
    for (const std::string& n : flags.secret_headers) names.emplace_back(n);
    (*body)["secret_headers"] = std::move(names);
  }
  HR_RETURN_IF_ERROR(NothingToChange(*body, update));
  return body;
}

void AddCatalogEditCommands(Command sources, Command destinations, Command routes, int& exit_code) {
  for (bool update : {false, true}) {
    AddWrite<SourceFlags>(
        sources, "source", update, AddSourceFlags, BuildSourceBody,
        [](const json::object& s) { return RenderSourceDetail(s, SystemClock::Instance().Now()); },
        exit_code);
    AddWrite<DestinationFlags>(
        destinations, "destination", update, AddDestinationFlags, BuildDestinationBody,
        [](const json::object& d) {
          return RenderDestinationDetail(d, SystemClock::Instance().Now(), TerminalWidth());
        },
        exit_code);
  }
  AddRemove(sources, "source", exit_code);
  AddRemove(destinations, "destination", exit_code);

  AddRemove(routes, "route", exit_code);
}

}  // namespace hookrelay::cli
