#include "transform/sandbox.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "transform/watchdog.h"

namespace hookrelay::transform {
namespace {

// Real SpiderMonkey, one context on the test's thread.
class SandboxTest : public testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Sandbox>> s = Sandbox::Create(watchdog_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    sandbox_ = std::move(*s);
  }

  static Request Stripe() {
    Request r;
    r.method = "POST";
    r.path = "/hooks/stripe";
    r.query = "v=1";
    r.headers = {{"Content-Type", "application/json"},
                 {"Stripe-Signature", "t=1,v1=abc"},
                 {"X-Tag", "a"},
                 {"x-tag", "b"}};
    r.body =
        R"({"id":"evt_1","type":"invoice.paid","data":{"object":{"amount_due":1200,"customer":"cus_9"}}})";
    return r;
  }

  Result<Outcome> Call(const std::string& script, const Request& r = Stripe(),
                       Limits limits = Limits()) {
    return sandbox_->Call(script, r, limits);
  }

  // The error message of a call that must fail.
  std::string Error(const std::string& script, Status::Code code = Status::Code::kInvalidArgument,
                    Limits limits = Limits()) {
    Result<Outcome> r = Call(script, Stripe(), limits);
    EXPECT_FALSE(r.ok());
    if (r.ok()) return "(no error)";
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    return r.status().message();
  }

  std::string Header(const Request& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
      if (n == name) return v;
    }
    return "(absent)";
  }

  Watchdog watchdog_;
  std::unique_ptr<Sandbox> sandbox_;
};

TEST_F(SandboxTest, ReturningTheRequestUnchangedKeepsEveryByte) {
  Result<Outcome> r = Call("function transform(request) { return request; }");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->request.has_value());
  const Request in = Stripe();
  EXPECT_EQ(r->request->method, in.method);
  EXPECT_EQ(r->request->path, in.path);
  EXPECT_EQ(r->request->query, in.query);
  EXPECT_EQ(r->request->body, in.body);  // not re-serialized: json was not changed
  // The headers as the script saw them: lower-cased, the repeated one joined.
  EXPECT_EQ(Header(*r->request, "x-tag"), "a, b");
  EXPECT_EQ(Header(*r->request, "stripe-signature"), "t=1,v1=abc");
  EXPECT_GT(r->memory_bytes, 0u);
  EXPECT_GT(r->cpu.count(), 0);
}

TEST_F(SandboxTest, LeavingHeadersOutKeepsTheRepeatedOnesAsTheyArrived) {
  Result<Outcome> r = Call("function transform(r) { return {path: '/other'}; }");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->request->path, "/other");
  EXPECT_EQ(r->request->headers, Stripe().headers);
  EXPECT_EQ(r->request->body, Stripe().body);
  EXPECT_EQ(r->request->method, "POST");
}

TEST_F(SandboxTest, AddsAHeader) {
  Result<Outcome> r = Call(R"(
    function transform(request) {
      request.headers['x-added'] = 'yes';
      return request;
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Header(*r->request, "x-added"), "yes");
  EXPECT_EQ(Header(*r->request, "content-type"), "application/json");
}

TEST_F(SandboxTest, RenamesTwoJsonFieldsAndSerializesTheBody) {
  Result<Outcome> r = Call(R"(
    function transform(request) {
      const { id, type, ...rest } = request.json;
      request.json = { event_id: id, event_type: type, ...rest };
      return request;
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(
      r->request->body,
      R"({"event_id":"evt_1","event_type":"invoice.paid","data":{"object":{"amount_due":1200,"customer":"cus_9"}}})");
}

TEST_F(SandboxTest, ChangesMethodPathAndQuery) {
  Result<Outcome> r = Call(R"(
    function transform(r) {
      return { ...r, method: 'PUT', path: `/v2${r.path}`, query: r.query + '&source=stripe' };
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->request->method, "PUT");
  EXPECT_EQ(r->request->path, "/v2/hooks/stripe");
  EXPECT_EQ(r->request->query, "v=1&source=stripe");
}

TEST_F(SandboxTest, ReturningNullSkips) {
  Result<Outcome> r =
      Call("function transform(r) { return r.json?.type === 'invoice.paid' ? null : r; }");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->request.has_value());
}

TEST_F(SandboxTest, ModernSyntax) {
  Result<Outcome> r = Call(R"(
    const pick = ({ data: { object: { amount_due = 0, customer } = {} } = {} }) =>
        ({ amount: amount_due, customer });
    class Tagger { constructor(t) { this.t = t; } apply(h) { return { ...h, 'x-t': this.t }; } }
    function transform(request) {
      const { amount, customer } = pick(request.json);
      let label = `${customer ?? 'nobody'}:${amount}`;
      const missing = request.json?.data?.nothing?.deeper;
      const big = 2n ** 64n;
      const tags = [...new Set(['a', 'b', 'a'])].map((x) => x.toUpperCase()).join('');
      return { headers: new Tagger(label + ':' + String(missing) + ':' + big + ':' + tags)
                            .apply(request.headers) };
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Header(*r->request, "x-t"), "cus_9:1200:undefined:18446744073709551616:AB");
}

TEST_F(SandboxTest, NonJsonBodyGivesNullJsonAndAnErrorWithItsLine) {
  Request r = Stripe();
  r.body = "name=value";
  Result<Outcome> out = sandbox_->Call(
      "function transform(request) {\n"
      "  const x = 1;\n"
      "  return request.json.type;\n"
      "}",
      r, Limits());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "TypeError: request.json is null (line 3)");
}

TEST_F(SandboxTest, AThrownErrorSaysWhatAndWhere) {
  EXPECT_EQ(Error("function transform(r) {\n\n  throw new Error('no thanks');\n}"),
            "Error: no thanks (line 3)");
  EXPECT_EQ(Error("function transform(r) { throw 'plain'; }"),
            "uncaught exception: plain (line 1)");
}

TEST_F(SandboxTest, SyntaxErrorsSayWhere) {
  const std::string message = Error("function transform(r) {\n  return r +;\n}");
  EXPECT_TRUE(message.starts_with("SyntaxError: ")) << message;
  EXPECT_TRUE(message.ends_with("(line 2)")) << message;
  EXPECT_EQ(sandbox_->CachedScripts(), 0u);  // failures are not cached
}

TEST_F(SandboxTest, AScriptWithoutTransformIsRefused) {
  EXPECT_EQ(Error("function transfrom(r) { return r; }"),
            "the script does not define function transform(request)");
  EXPECT_EQ(Error("var transform = 3;"), "the script does not define function transform(request)");
}

TEST_F(SandboxTest, InvalidReturnsNameTheField) {
  EXPECT_EQ(Error("function transform(r) { return 42; }"),
            "returned 42; expected an object or null");
  EXPECT_EQ(Error("function transform(r) { }"), "returned undefined; expected an object or null");
  EXPECT_EQ(Error("function transform(r) { return 'x'; }"),
            "returned a string; expected an object or null");
  EXPECT_EQ(Error("function transform(r) { return [r]; }"),
            "returned an array; expected an object or null");
  EXPECT_EQ(Error("async function transform(r) { return r; }"),
            "returned a Promise; transform must return the request itself (no async)");
  EXPECT_EQ(Error("function transform(r) { r.headers.x = 1; return r; }"),
            "returned headers[\"x\"] is not a string");
  EXPECT_EQ(Error("function transform(r) { r.headers['a b'] = '1'; return r; }"),
            "returned headers has \"a b\", which is not a header name");
  EXPECT_EQ(Error("function transform(r) { r.headers.x = 'a\\r\\nInjected: 1'; return r; }"),
            "returned headers[\"x\"] contains a line break or NUL");
  EXPECT_EQ(Error("function transform(r) { return {headers: ['a']}; }"),
            "returned headers is not an object of name: string");
  EXPECT_EQ(Error("function transform(r) { return {method: 7}; }"),
            "returned method is not a string");
  EXPECT_EQ(Error("function transform(r) { return {method: 'GE T'}; }"),
            "returned method \"GE T\" is not an HTTP method");
  EXPECT_EQ(Error("function transform(r) { return {path: 'x'}; }"),
            "returned path \"x\" does not start with '/'");
  EXPECT_EQ(Error("function transform(r) { return {path: '/a?b=1'}; }"),
            "returned path \"/a?b=1\" has a character a path cannot carry (percent-encode it; the "
            "query goes in query)");
  EXPECT_EQ(Error("function transform(r) { return {query: '?a=1'}; }"),
            "returned query starts with '?'; give it without");
  EXPECT_EQ(Error("function transform(r) { return {body: {}}; }"), "returned body is not a string");
  EXPECT_EQ(Error("function transform(r) { r.body = 'x'; r.json.id = 'y'; return r; }"),
            "returned both a changed body and a changed json; change only one of them");
  EXPECT_EQ(Error("function transform(r) { const j = {}; j.self = j; return {json: j}; }"),
            "returned json cannot be serialized: TypeError: cyclic object value");
}

TEST_F(SandboxTest, ABodyStringIsSentAsItIs) {
  Result<Outcome> r = Call("function transform(r) { return {...r, body: 'caf\\u00e9'}; }");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->request->body, "caf\xc3\xa9");
}

TEST_F(SandboxTest, JsonOnANonJsonRequestBecomesTheBodyWithItsContentType) {
  Request in = Stripe();
  in.body = "a=1";
  in.headers = {};
  Result<Outcome> r =
      sandbox_->Call("function transform(r) { return {json: {form: r.body}}; }", in, Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->request->body, R"({"form":"a=1"})");
  EXPECT_EQ(Header(*r->request, "content-type"), "application/json");
}

// --- the sandbox: each escape refused with a clear error, the process unharmed ---

TEST_F(SandboxTest, NothingReachesFilesNetworkProcessesOrModules) {
  Result<Outcome> r = Call(R"(
    function transform(r) {
      const names = ['print', 'load', 'read', 'readline', 'snarf', 'os', 'require', 'process',
                     'import', 'Debugger', 'WebAssembly', 'SharedArrayBuffer', 'Atomics',
                     'setTimeout', 'setInterval', 'quit', 'evaluate', 'gc', 'fetch',
                     'XMLHttpRequest', 'environment', 'scriptArgs', 'File', 'FinalizationRegistry'];
      return {headers: {present: names.filter((n) => typeof globalThis[n] !== 'undefined').join(',')}};
    })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Header(*r->request, "present"), "");
  EXPECT_EQ(Error("function transform(r) { return read('/etc/passwd'); }"),
            "ReferenceError: read is not defined (line 1)");
  EXPECT_EQ(Error("function transform(r) { return os.file.readFile('/etc/passwd'); }"),
            "ReferenceError: os is not defined (line 1)");
  EXPECT_EQ(Error("function transform(r) { return require('fs'); }"),
            "ReferenceError: require is not defined (line 1)");
  const std::string import_error =
      Error("import fs from 'fs';\nfunction transform(r) { return r; }");
  EXPECT_TRUE(
      import_error.starts_with("SyntaxError: import declarations may only appear at top "
                               "level of a module"))
      << import_error;
}

TEST_F(SandboxTest, EvalAndFunctionFromThePayloadReachNothing) {
  Request in = Stripe();
  in.body = R"({"code":"typeof read + typeof os + typeof require"})";
  Result<Outcome> r = sandbox_->Call(R"(
    function transform(request) {
      const a = eval(request.json.code);
      const b = Function('return ' + request.json.code)();
      return {headers: {a, b}};
    })",
                                     in, Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Header(*r->request, "a"), "undefinedundefinedundefined");
  EXPECT_EQ(Header(*r->request, "b"), "undefinedundefinedundefined");
}

TEST_F(SandboxTest, AnEndlessLoopStopsAtItsCpuLimitAndTheNextCallWorks) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Error("function transform(r) { while (true) {} }", Status::Code::kResourceExhausted),
            "exceeded 50 ms of CPU time");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // A catch cannot keep it going.
  EXPECT_EQ(Error("function transform(r) { for (;;) { try { while (true) {} } catch (e) {} } }",
                  Status::Code::kResourceExhausted, Limits{std::chrono::milliseconds(20)}),
            "exceeded 20 ms of CPU time");
  Result<Outcome> next = Call("function transform(r) { return null; }");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_LT(next->cpu, std::chrono::milliseconds(20));
}

// The CPU budget of the out-of-memory cases: far more than the allocations need to reach the
// memory limit, which is what these cases check (its error), not a time. A second was enough on
// an idle machine, but on a loaded 2-core one (CI, under the sanitizers and once without) making
// 1e8 elements took longer, and the call stopped on its CPU limit first.
constexpr std::chrono::milliseconds kOutOfMemoryCpu{20000};

TEST_F(SandboxTest, AHugeStringIsOutOfMemory) {
  // A rope of 1e9 characters costs nothing until it is made flat; returned, it is refused before.
  EXPECT_EQ(Error("function transform(r) { return {body: 'x'.repeat(1e9)}; }",
                  Status::Code::kResourceExhausted),
            "returned body is longer than the memory limit (16 MiB)");
  // Made flat inside the script: the characters are malloc'd, measured, refused.
  Limits generous{kOutOfMemoryCpu};
  EXPECT_EQ(Error("function transform(r) { const s = 'x'.repeat(1e8); s.indexOf('y'); "
                  "return {body: s.slice(0, 10)}; }",
                  Status::Code::kResourceExhausted, generous),
            "out of memory (limit 16 MiB)");
  ASSERT_TRUE(Call("function transform(r) { return r; }").ok());
}

TEST_F(SandboxTest, HugeArraysAreOutOfMemory) {
  Limits generous{kOutOfMemoryCpu};
  // Objects: the GC heap's hard limit.
  EXPECT_EQ(Error("function transform(r) { const a = []; for (;;) a.push({i: a.length}); }",
                  Status::Code::kResourceExhausted, generous),
            "out of memory (limit 16 MiB)");
  // Numbers: malloc'd elements, measured after the collections they cause.
  EXPECT_EQ(Error("function transform(r) { const a = []; for (;;) a.push(1.5); }",
                  Status::Code::kResourceExhausted, generous),
            "out of memory (limit 16 MiB)");
  EXPECT_EQ(Error("function transform(r) { return {body: String(new Array(1e9).fill(0).length)}; }",
                  Status::Code::kResourceExhausted, generous),
            "out of memory (limit 16 MiB)");
  EXPECT_EQ(Error("function transform(r) { const t = new Float64Array(1e8); t.fill(1); "
                  "return {body: String(t.length)}; }",
                  Status::Code::kResourceExhausted, generous),
            "out of memory (limit 16 MiB)");
  ASSERT_TRUE(Call("function transform(r) { return r; }").ok());
}

TEST_F(SandboxTest, DeepRecursionIsTooMuchRecursion) {
  EXPECT_EQ(Error("function f(n) { return f(n + 1) + 1; }\nfunction transform(r) { f(0); }"),
            "InternalError: too much recursion (line 1)");
  ASSERT_TRUE(Call("function transform(r) { return r; }").ok());
}

TEST_F(SandboxTest, NoStateLeaksIntoLaterCalls) {
  Result<Outcome> a = Call(R"(
    Object.prototype.polluted = 'yes';
    Array.prototype.map = () => 'hijacked';
    JSON.stringify = () => '{"hijacked":true}';
    globalThis.x = 1;
    var counter = (globalThis.counter || 0) + 1;
    function transform(r) { return {headers: {counter: String(counter)}}; })");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string probe = R"(
    function transform(r) {
      return {headers: {seen: [typeof ({}).polluted, typeof globalThis.x,
                               String([1].map((v) => v + 1)), JSON.stringify({a: 1})].join(' ')}};
    })";
  Result<Outcome> other = Call(probe);  // another script
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(Header(*other->request, "seen"), "undefined undefined 2 {\"a\":1}");
  // The same script again: a fresh global too.
  Result<Outcome> again = Call(R"(
    Object.prototype.polluted = 'yes';
    Array.prototype.map = () => 'hijacked';
    JSON.stringify = () => '{"hijacked":true}';
    globalThis.x = 1;
    var counter = (globalThis.counter || 0) + 1;
    function transform(r) { return {headers: {counter: String(counter)}}; })");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Header(*again->request, "counter"), "1");
}

// A scope (the delivery engine's destination name) keeps its realm between calls: the script's
// own top-level state lives on within that scope, and nothing reaches another scope or a fresh
// call, since every object the global reaches is frozen before the script runs.
TEST_F(SandboxTest, AScopesRealmIsKeptForItsScriptAndFrozen) {
  const std::string counter = R"(
    let n = 0;
    function transform(r) { n += 1; return {headers: {n: String(n)}}; })";
  auto n = [&](std::string_view scope) {
    Result<Outcome> r = sandbox_->Call(counter, Stripe(), Limits(), scope);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? Header(*r->request, "n") : "(failed)";
  };
  EXPECT_EQ(n("billing"), "1");
  EXPECT_EQ(n("billing"), "2");
  EXPECT_EQ(n("crm"), "1");  // the same script for another destination: its own realm
  EXPECT_EQ(n(""), "1");     // no scope: a fresh realm each call
  EXPECT_EQ(n(""), "1");
  EXPECT_EQ(n("billing"), "3");
  EXPECT_EQ(sandbox_->KeptRealms(), 2u);

  // Pollution of the standard classes is refused: ignored in sloppy code, a TypeError in strict.
  const std::string polluter = R"(
    function transform(r) {
      Object.prototype.polluted = 'yes';
      Array.prototype.map = () => 'hijacked';
      try { Object.defineProperty(Object.prototype, 'p2', {value: 1}); } catch (e) {}
      try { Object.setPrototypeOf(Array.prototype, null); } catch (e) {}
      JSON.parse = () => ({hijacked: true});
      return {headers: {seen: [typeof ({}).polluted, typeof ({}).p2,
                               String([1].map((v) => v + 1)), typeof JSON.parse('{}').hijacked,
                               typeof [].map].join(' ')}};
    })";
  Result<Outcome> polluted = sandbox_->Call(polluter, Stripe(), Limits(), "billing");
  ASSERT_TRUE(polluted.ok()) << polluted.status().ToString();
  EXPECT_EQ(Header(*polluted->request, "seen"), "undefined undefined 2 undefined function");
  Result<Outcome> strict =
      sandbox_->Call("'use strict'; function transform(r) { Object.prototype.x = 1; return r; }",
                     Stripe(), Limits(), "billing");
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("TypeError"), std::string::npos)
      << strict.status().message();
  // What another scope's script, a fresh call and the polluter's own next call see.
  const std::string probe = R"(
    function transform(r) {
      return {headers: {seen: [typeof ({}).polluted, String([1].map((v) => v + 1)),
                               JSON.stringify(JSON.parse('{"a":1}'))].join(' ')}};
    })";
  for (std::string_view scope : {"crm", "", "billing"}) {
    Result<Outcome> seen = sandbox_->Call(probe, Stripe(), Limits(), scope);
    ASSERT_TRUE(seen.ok()) << seen.status().ToString();
    EXPECT_EQ(Header(*seen->request, "seen"), "undefined 2 {\"a\":1}") << scope;
  }
  // A fresh realm (the test and preview API) is frozen the same way, so a preview behaves as
  // the delivery will.
  Result<Outcome> fresh = Call(polluter);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(Header(*fresh->request, "seen"), "undefined undefined 2 undefined function");
}

// Past Options::kept_realms the least recently used realm goes; its scope starts afresh.
TEST_F(SandboxTest, TheLeastRecentlyUsedRealmGoesPastTheirNumber) {
  sandbox_.reset();  // one context per thread
  Sandbox::Options options;
  options.kept_realms = 2;
  Result<std::unique_ptr<Sandbox>> made = Sandbox::Create(watchdog_, options);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Sandbox& sandbox = **made;
  const std::string counter =
      "let n = 0; function transform(r) { n += 1; return {headers: {n: String(n)}}; }";
  auto n = [&](std::string_view scope) {
    Result<Outcome> r = sandbox.Call(counter, Stripe(), Limits(), scope);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? Header(*r->request, "n") : "(failed)";
  };
  EXPECT_EQ(n("a"), "1");
  EXPECT_EQ(n("b"), "1");
  EXPECT_EQ(n("a"), "2");  // a is now the most recently used
  EXPECT_EQ(n("c"), "1");  // b goes
  EXPECT_EQ(sandbox.KeptRealms(), 2u);
  EXPECT_EQ(n("a"), "3");
  EXPECT_EQ(n("b"), "1");  // made again
}

// Making, freezing and measuring a realm (about 4 ms, far more than a small transform) is not
// charged to the script: in a fresh realm and in a scope's new one, what the call reports is
// under half of the CPU the whole call took. The ratio holds under sanitizers, which slow both.
TEST_F(SandboxTest, HardeningARealmIsNotChargedToTheScript) {
  for (std::string_view scope : {"", "billing"}) {
    const std::chrono::nanoseconds start = Watchdog::ThreadCpuNow();
    Result<Outcome> r =
        sandbox_->Call("function transform(r) { return r; }", Stripe(), Limits(), scope);
    const std::chrono::nanoseconds spent = Watchdog::ThreadCpuNow() - start;
    ASSERT_TRUE(r.ok()) << r.status().ToString() << " scope=" << scope;
    EXPECT_LT(r->cpu * 2, spent) << r->cpu.count() << " µs charged of " << spent.count() / 1000
                                 << " µs, scope=" << scope;
  }
}

// The top level runs before the freeze: it may add to the standard classes for its own calls (a
// polyfill), and no other scope sees that.
TEST_F(SandboxTest, ATopLevelPolyfillWorksForItsOwnCallsAlone) {
  const std::string polyfill = R"(
    String.prototype.shout = function () { return this.toUpperCase() + '!'; };
    function transform(r) { return {headers: {x: 'hi'.shout()}}; })";
  for (std::string_view scope : {"billing", "billing", ""}) {
    Result<Outcome> r = sandbox_->Call(polyfill, Stripe(), Limits(), scope);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Header(*r->request, "x"), "HI!");
  }
  Result<Outcome> other =
      sandbox_->Call("function transform(r) { return {headers: {x: typeof ''.shout}}; }", Stripe(),
                     Limits(), "crm");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(Header(*other->request, "x"), "undefined");
}

// A thrown error keeps the realm (the script's to handle); a kept realm is made again when the
// state it keeps passes the memory limit, and the next call works.
TEST_F(SandboxTest, AKeptRealmOutlivesAThrowAndIsMadeAgainPastItsMemory) {
  const std::string fails_second = R"(
    let n = 0;
    function transform(r) { n += 1; if (n === 2) throw new Error('second'); return {headers: {n: String(n)}}; })";
  auto call = [&](const std::string& script, Limits limits = Limits()) {
    return sandbox_->Call(script, Stripe(), limits, "billing");
  };
  ASSERT_TRUE(call(fails_second).ok());
  Result<Outcome> second = call(fails_second);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "Error: second (line 3)");
  Result<Outcome> third = call(fails_second);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(Header(*third->request, "n"), "3");

  // 1 MiB more kept per call, under a 4 MiB limit: a call is refused by the 16th (a kept realm
  // is measured at each major collection during its calls, and every 128th call), then all is
  // well again.
  const std::string hoards = R"(
    const kept = [];
    function transform(r) { kept.push(new Array(1 << 17).fill(1.5)); return {headers: {n: String(kept.length)}}; })";
  Limits limits;
  limits.memory_bytes = size_t{4} << 20;
  int refused_at = 0;
  for (int i = 1; i <= 200 && refused_at == 0; ++i) {
    Result<Outcome> r = call(hoards, limits);
    if (!r.ok()) {
      EXPECT_EQ(r.status().message(), "out of memory (limit 4 MiB)");
      refused_at = i;
    }
  }
  EXPECT_GT(refused_at, 1);
  EXPECT_LE(refused_at, 16) << "the realm kept more than the limit for too long";
  Result<Outcome> after = call(hoards, limits);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(Header(*after->request, "n"), "1");
}

// The CPU limit holds in a kept realm too, and the realm is made again after it.
TEST_F(SandboxTest, AKeptRealmsEndlessLoopStopsAtItsCpuLimit) {
  const std::string script = R"(
    let n = 0;
    function transform(r) { n += 1; if (n === 2) for (;;) {} return {headers: {n: String(n)}}; })";
  ASSERT_TRUE(sandbox_->Call(script, Stripe(), Limits(), "billing").ok());
  Result<Outcome> loop = sandbox_->Call(script, Stripe(), Limits(), "billing");
  ASSERT_FALSE(loop.ok());
  EXPECT_EQ(loop.status().message(), "exceeded 50 ms of CPU time");
  Result<Outcome> next = sandbox_->Call(script, Stripe(), Limits(), "billing");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(Header(*next->request, "n"), "1");
}

// A changed json goes out as UTF-8: two-, three- and four-byte (a surrogate pair) characters; a
// lone surrogate is escaped by JSON.stringify.
TEST_F(SandboxTest, ASerializedJsonIsUtf8) {
  Request r = Stripe();
  r.body =
      "{\"name\":\"Ren\xC3\xA9"
      "e \xE2\x82\xAC \xF0\x9F\x98\x80\"}";
  Result<Outcome> out = Call(R"(
    function transform(r) { r.json = {who: r.json.name, lone: '\uD800'}; return r; })",
                             r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->request->body,
            "{\"who\":\"Ren\xC3\xA9"
            "e \xE2\x82\xAC \xF0\x9F\x98\x80\",\"lone\":\"\\ud800\"}");
}

TEST_F(SandboxTest, AReturnedHeaderMayNotBeAGetterThatLoops) {
  // Converting the result runs the script's getters: still under the CPU limit.
  EXPECT_EQ(Error("function transform(r) { return {get method() { for (;;) {} }}; }",
                  Status::Code::kResourceExhausted),
            "exceeded 50 ms of CPU time");
}

TEST_F(SandboxTest, ScriptsAreCompiledOncePerSandbox) {
  const std::string script = "function transform(r) { return r; }";
  ASSERT_TRUE(Call(script).ok());
  ASSERT_TRUE(Call(script).ok());
  EXPECT_EQ(sandbox_->CachedScripts(), 1u);
  ASSERT_TRUE(Call(script + "\n").ok());
  EXPECT_EQ(sandbox_->CachedScripts(), 2u);
}

TEST(FormatBytesTest, Units) {
  EXPECT_EQ(FormatBytes(16 << 20), "16 MiB");
  EXPECT_EQ(FormatBytes(512 << 10), "512 KiB");
  EXPECT_EQ(FormatBytes(1000), "1000 bytes");
}

}  // namespace
}  // namespace hookrelay::transform

namespace hookrelay::transform {
namespace {

// What the catalog runs when a transform is saved: errors no request can cause, nothing else.
TEST_F(SandboxTest, CheckRefusesWhatCannotRunAndAcceptsWhatDependsOnTheEvent) {
  const Limits limits;
  EXPECT_TRUE(sandbox_->Check("function transform(r) { return r.json.data.object; }", limits).ok());
  Status syntax = sandbox_->Check("function transform(r) {\n  return r.;\n}", limits);
  EXPECT_EQ(syntax.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(syntax.message().find("SyntaxError"), std::string::npos) << syntax.message();
  EXPECT_NE(syntax.message().find("(line 2)"), std::string::npos) << syntax.message();
  Status none = sandbox_->Check("const x = 1;", limits);
  EXPECT_NE(none.message().find("does not define function transform"), std::string::npos);
  Status loop = sandbox_->Check("while (true) {} function transform(r) { return r; }", limits);
  EXPECT_EQ(loop.code(), Status::Code::kResourceExhausted) << loop.message();
  // A check leaves nothing behind: the next call runs as usual.
  EXPECT_TRUE(Call("function transform(r) { return r; }").ok());
}

}  // namespace
}  // namespace hookrelay::transform
