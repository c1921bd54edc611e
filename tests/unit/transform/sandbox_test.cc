#include "transform/sandbox.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

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

TEST_F(SandboxTest, AHugeStringIsOutOfMemory) {
  // A rope of 1e9 characters costs nothing until it is made flat; returned, it is refused before.
  EXPECT_EQ(Error("function transform(r) { return {body: 'x'.repeat(1e9)}; }",
                  Status::Code::kResourceExhausted),
            "returned body is longer than the memory limit (16 MiB)");
  // Made flat inside the script: the characters are malloc'd, measured, refused.
  Limits generous{std::chrono::milliseconds(1000)};
  EXPECT_EQ(Error("function transform(r) { const s = 'x'.repeat(1e8); s.indexOf('y'); "
                  "return {body: s.slice(0, 10)}; }",
                  Status::Code::kResourceExhausted, generous),
            "out of memory (limit 16 MiB)");
  ASSERT_TRUE(Call("function transform(r) { return r; }").ok());
}

TEST_F(SandboxTest, HugeArraysAreOutOfMemory) {
  Limits generous{std::chrono::milliseconds(1000)};
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
