// Fuzzes every management API JSON body parser (src/api/request_params.h and what the API hands the
// bodies to): the first byte picks the parser, the rest is the body. For every input each must
// return a value or an InvalidArgument (never throw, crash or hit undefined behaviour), and an
// error's message must be non-empty and, when it names a field, mention it — the API shows both
// to the user (see tests/integration/api_input_test.cc for the same rule end to end).

#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/request_params.h"
#include "catalog/catalog_plan.h"
#include "model/destination.h"
#include "model/registry.h"
#include "model/source.h"
#include "replay/replay_filter.h"

namespace {

using hookrelay::Status;

[[noreturn]] void Fail(const char* parser, const Status& s, const char* why) {
  std::fprintf(stderr, "api_body_fuzzer: %s: %s: %s\n", parser, why, s.ToString().c_str());
  std::abort();
}

// An error the API would show: InvalidArgument with a message; when it has a field, the message
// names it (the catalog handler prefixes "field: " itself, so that is checked there only).
void CheckError(const char* parser, const Status& s, bool message_names_field) {
  if (s.ok()) return;
  if (s.code() != Status::Code::kInvalidArgument) Fail(parser, s, "not InvalidArgument");
  if (s.message().empty()) Fail(parser, s, "empty message");
  if (message_names_field && !s.field().empty() &&
      s.message().find(s.field()) == std::string::npos) {
    Fail(parser, s, "the message does not name the field");
  }
}

// The catalog bodies: ParseCatalogBody, then the model parser the catalog calls, and (as a PATCH
// does) the body merged onto a valid object first.
template <typename ParseFn>
void FuzzCatalog(const char* parser, std::string_view body, ParseFn parse, const char* valid_json) {
  auto v = hookrelay::api::ParseCatalogBody(body);
  CheckError(parser, v.status(), true);
  if (!v.ok()) return;
  CheckError(parser, parse(*v).status(), false);
  const boost::json::value merged =
      hookrelay::catalog::MergePatch(boost::json::parse(valid_json), *v);
  CheckError(parser, parse(merged).status(), false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace api = hookrelay::api;
  namespace model = hookrelay::model;
  switch (data[0] % 8) {
    case 0: FuzzCatalog("source", body, model::ParseSource, R"({"name": "s"})"); break;
    case 1:
      FuzzCatalog("destination", body, model::ParseDestination,
                  R"({"name": "d", "url": "http://127.0.0.1:9/"})");
      break;
    case 2:
      FuzzCatalog("route", body, model::ParseRoute, R"({"source": "s", "destination": "d"})");
      break;
    case 3: {
      auto r = api::ParsePauseBody(body, "default");
      CheckError("pause", r.status(), true);
      if (r.ok() && r->empty()) Fail("pause", Status::Ok(), "an empty reason was accepted");
      break;
    }
    case 4: {
      // The bodies of the destination controls without a catalog object: resume and
      // reset-breaker (empty) and rotate-secret.
      CheckError("empty", api::ParseEmptyBody(body), true);
      auto r = api::ParseRotateSecretBody(body);
      CheckError("rotate_secret", r.status(), true);
      if (r.ok() && (r->grace.count() < 0 || r->grace > model::kMaxSecretGrace)) {
        Fail("rotate_secret", Status::Ok(), "a grace outside 0s to 7d was accepted");
      }
      break;
    }
    case 5: CheckError("replay", api::ParseReplayBody(body).status(), true); break;
    case 6: {
      auto r = api::ParseBulkReplayBody(body);
      CheckError("bulk_replay", r.status(), true);
      if (!r.ok()) break;
      if (r->rate && !(*r->rate > 0)) Fail("bulk_replay", Status::Ok(), "rate not positive");
      auto f = hookrelay::replay::ParseReplayFilter(r->filter_json);
      CheckError("bulk_replay filter", f.status(), true);
      break;
    }
    case 7: {
      // The filter of a stored job is parsed back from text too.
      CheckError("replay_filter", hookrelay::replay::ParseReplayFilter(body).status(), true);
      break;
    }
  }
  return 0;
}
