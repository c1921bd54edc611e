#include "cli/transform_command.h"

#include <boost/json.hpp>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/api_client.h"
#include "cli/catalog_edit.h"
#include "cli/management_command.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

struct TransformTestOptions {
  std::string event;
  std::string destination;
  std::string request;  // JSON or @FILE
  std::string script;   // a file, or @FILE / @-
  std::string cpu;
  std::string memory;
};

std::string Show(const json::object& answer) {
  std::ostringstream out;
  const json::value* result = answer.if_contains("result");
  const json::value* cpu = answer.if_contains("cpu_ms");
  const json::value* memory = answer.if_contains("memory_bytes");
  std::ostringstream used;
  used.precision(3);
  if (cpu && cpu->is_number()) used << cpu->to_number<double>() << " ms of CPU";
  if (memory && memory->is_number()) {
    used << ", " << memory->to_number<double>() / 1024.0 << " KiB of memory";
  }
  if (result && result->is_string() && result->get_string() == "skip") {
    out << "The transform returned null: the delivery would be skipped (" << used.str() << ").\n";
    return out.str();
  }
  out << "The transform returned this request (" << used.str() << "):\n\n";
  const json::value* req = answer.if_contains("request");
  if (!req || !req->is_object()) return out.str();
  const json::object& r = req->get_object();
  auto text = [&](const char* k) {
    const json::value* v = r.if_contains(k);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  out << text("method") << " " << text("path") << (text("query").empty() ? "" : "?")
      << text("query") << "\n";
  if (const json::value* h = r.if_contains("headers"); h && h->is_array()) {
    for (const json::value& pair : h->get_array()) {
      if (!pair.is_array() || pair.get_array().size() != 2) continue;
      out << std::string_view(pair.get_array()[0].as_string()) << ": "
          << std::string_view(pair.get_array()[1].as_string()) << "\n";
    }
  }
  out << "\n";
  if (r.contains("body")) {
    out << text("body") << "\n";
  } else {
    out << "(" << r.at("size").as_int64() << " bytes that are not UTF-8; --json has them in "
        << "base64)\n";
  }
  return out.str();
}

}  // namespace

void AddTransformCommand(Command app, int& exit_code) {
  Command transform = app.Subcommand("transform", "Try a JavaScript transform (the API)");
  transform.RequireSubcommand();
  auto o = std::make_shared<TransformTestOptions>();
  auto common = std::make_shared<ManagementOptions>();
  Command test = transform.Subcommand(
      "test", "Run a transform once on an event (or a request) and print what it would send");
  Option event = test.Add("--event", o->event, "The event whose request it gets");
  test.Add("--destination", o->destination,
           "Build the request as it would go to this destination (and, without --script, run "
           "its transform)");
  Option request = test.Add("--request", o->request,
                            "An inline request instead of an event: JSON {method, path, query, "
                            "headers, body}, or @FILE");
  event.Excludes(request);
  test.Add("--script", o->script, "The JavaScript file (defines function transform(request))");
  test.Add("--cpu", o->cpu, "CPU time limit of the call (default 50ms)");
  test.Add("--memory", o->memory, "Heap limit of the call (default 16MiB)");
  AddManagementOptions(test, *common);
  test.Callback([o, common, &exit_code] {
    if (o->event.empty() && o->request.empty()) {
      throw UsageError("give --event ID (or --request JSON) to run the transform on");
    }
    json::object body;
    if (!o->script.empty()) {
      const std::string arg = o->script.front() == '@' ? o->script : "@" + o->script;
      Result<std::string> script = ReadValueArg(arg, "--script");
      if (!script.ok()) throw UsageError(script.status().message());
      body["script"] = *script;
    }
    if (!o->event.empty()) body["event"] = o->event;
    if (!o->destination.empty()) body["destination"] = o->destination;
    if (!o->request.empty()) {
      Result<std::string> text = ReadValueArg(o->request, "--request");
      if (!text.ok()) throw UsageError(text.status().message());
      boost::system::error_code ec;
      json::value v = json::parse(*text, ec);
      if (ec) throw UsageError("--request", "not JSON: " + ec.message());
      body["request"] = std::move(v);
    }
    if (!o->cpu.empty()) body["cpu"] = o->cpu;
    if (!o->memory.empty()) body["memory"] = o->memory;
    ApiClient client = MakeClient(*common);
    Result<json::value> answer = client.Post("/api/v1/transforms/test", body);
    if (!answer.ok()) {
      exit_code = ReportApiError("transform test", answer.status());
      return;
    }
    if (common->json) {
      PrintJson(*answer);
    } else if (answer->is_object()) {
      std::cout << Show(answer->get_object());
    }
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
