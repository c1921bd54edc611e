#include "transform/sandbox.h"

// SpiderMonkey 102 (Debian's libmozjs-102-dev), included as system headers (CMake: -isystem).
#include <js/Array.h>
#include <js/CallAndConstruct.h>
#include <js/CharacterEncoding.h>
#include <js/CompilationAndEvaluation.h>
#include <js/ContextOptions.h>
#include <js/Conversions.h>
#include <js/ErrorReport.h>
#include <js/Exception.h>
#include <js/GCAPI.h>
#include <js/Initialization.h>
#include <js/Interrupt.h>
#include <js/JSON.h>
#include <js/MemoryMetrics.h>
#include <js/Object.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <js/RealmOptions.h>
#include <js/SourceText.h>
#include <js/String.h>
#include <js/experimental/JSStencil.h>
#include <jsapi.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/ascii.h"

namespace hookrelay::transform {
namespace {

constexpr const char* kFileName = "transform.js";
// Garbage from earlier calls (their zones) the context keeps before a call collects it first.
constexpr size_t kGarbageBeforeGc = size_t{8} << 20;
// How often a running call's memory is measured (a collection of its zone, then a walk of its
// heap: well under a millisecond for a small heap, a few at 16 MiB). Calls that end sooner are
// measured once, at the end.
constexpr std::chrono::milliseconds kMemoryTick{10};
constexpr int kGcEveryTicks = 4;
// A kept realm (a scope's: Sandbox::Call with a scope) is made again after this many calls, and
// measured every kRealmMeasureEvery calls (and after any call of kRealmMeasureAfterCpu or more).
constexpr size_t kRealmCalls = 1000;
constexpr size_t kRealmMeasureEvery = 128;
constexpr std::chrono::microseconds kRealmMeasureAfterCpu{2000};

// Every realm a call runs in is hardened (Prepare): before the script's top level runs, this
// captures the standard classes (every global property there is then); after it, the function it
// returns freezes each of them and every object they reach (prototypes, methods, accessors), so
// no call can change what a later call finds there: Object.prototype.x = 1 in transform() is
// ignored, or a TypeError in strict code. The script's top level runs before the freeze and may
// still add to them for its own use (a polyfill); the global itself and what the script puts on
// it stay open.
constexpr const char* kHarden = R"js((function () {
  const freeze = Object.freeze, isFrozen = Object.isFrozen, protoOf = Object.getPrototypeOf,
        keys = Reflect.ownKeys, describe = Object.getOwnPropertyDescriptor, todo = [];
  const visit = (o, k) => { const d = describe(o, k); todo.push(d.value, d.get, d.set); };
  for (const k of keys(globalThis)) visit(globalThis, k);
  return function harden() {
    while (todo.length > 0) {
      const o = todo.pop();
      if (o === null || (typeof o !== 'object' && typeof o !== 'function') || o === globalThis ||
          isFrozen(o)) continue;
      freeze(o);
      todo.push(protoOf(o));
      for (const k of keys(o)) visit(o, k);
    }
  };
})())js";

const JSClass kGlobalClass = {"global", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps};

// Contexts alive now: JS_ShutDown may run at exit only when none is.
std::atomic<int> live_contexts{0};

// JS_Init once per process. JS_ShutDown at exit, when no context is left: without it,
// SpiderMonkey's static mutexes are destroyed while its helper threads still hold them, and the
// process crashes on its way out (MOZ_CRASH in MutexImpl::~MutexImpl, seen under ASan and in the
// plain build's exit status). Registered with atexit after JS_Init, so it runs before the
// library's own static destructors.
bool StartEngine() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    ok = JS_Init();
    if (ok) {
      std::atexit([] {
        if (live_contexts.load() == 0) JS_ShutDown();
      });
    }
  });
  return ok;
}

size_t MallocSize(const void* p) { return malloc_usable_size(const_cast<void*>(p)); }

std::string CpuMessage(std::chrono::milliseconds cpu) {
  return "exceeded " + std::to_string(cpu.count()) + " ms of CPU time";
}

// UTF-16 (what JSON.stringify writes) to UTF-8; lone surrogates become U+FFFD. Written into
// room made first (at most 3 bytes per UTF-16 unit), not appended a byte at a time: a 1 KiB body
// is converted on every call that changes json.
void AppendUtf8(std::u16string_view in, std::string& out) {
  const size_t start = out.size();
  out.resize(start + 3 * in.size());
  char* p = out.data() + start;
  for (size_t i = 0; i < in.size(); ++i) {
    uint32_t c = in[i];
    if (c < 0x80) {
      *p++ = static_cast<char>(c);
      continue;
    }
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < in.size() && in[i + 1] >= 0xDC00 &&
        in[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (in[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    if (c < 0x800) {
      *p++ = static_cast<char>(0xC0 | (c >> 6));
      *p++ = static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      *p++ = static_cast<char>(0xE0 | (c >> 12));
      *p++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *p++ = static_cast<char>(0x80 | (c & 0x3F));
    } else {  // a surrogate pair: two units in, four bytes out
      *p++ = static_cast<char>(0xF0 | (c >> 18));
      *p++ = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      *p++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *p++ = static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  out.resize(static_cast<size_t>(p - out.data()));
}

bool AppendJson(const char16_t* buf, uint32_t len, void* data) {
  static_cast<std::u16string*>(data)->append(buf, len);
  return true;
}

// A JS string of `s`, taken as UTF-8 (invalid sequences become U+FFFD).
JSString* NewString(JSContext* cx, std::string_view s) {
  const bool ascii =
      std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return JS_NewStringCopyN(cx, s.data(), s.size());
  size_t length = 0;
  JS::TwoByteCharsZ chars = JS::LossyUTF8CharsToNewTwoByteCharsZ(
      cx, JS::UTF8Chars(s.data(), s.size()), &length, js::MallocArena);
  if (!chars) return nullptr;
  return JS_NewUCString(cx, JS::UniqueTwoByteChars(chars.get()), length);
}

}  // namespace

std::string FormatBytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// Everything that names a SpiderMonkey type lives here, out of the header.
struct Sandbox::Impl {
  Watchdog& watchdog;
  Options options;
  JSContext* cx = nullptr;
  size_t baseline_gc_bytes = 0;

  // The call in progress, read by the interrupt and GC callbacks (on this thread) and, for
  // timed_out, written by the watchdog's thread.
  bool in_call = false;
  std::atomic<bool> timed_out{false};
  bool check_memory = false;                   // a collection ended
  std::atomic<bool> check_memory_tick{false};  // the watchdog's tick
  bool out_of_memory = false;
  int ticks = 0;
  size_t gc_bytes_at_start = 0;
  Limits limits;
  Watchdog::Token token = 0;  // the call's arming
  // CPU the call spent on its realm (Uncharged): not the script's, so neither charged to its
  // budget nor reported as its time.
  std::chrono::nanoseconds harden_cpu{0};
  JS::RootedObject* global = nullptr;  // the call's global, rooted by Run
  // What the call's realm measured before the call began (a kept realm's size when it was made;
  // 0 for a fresh one): the call is charged for what it adds.
  size_t measure_base = 0;

  // A kept realm: a scope's global for one script, made once (hardened, the script's top level
  // run), reused by the scope's calls until kRealmCalls, a call stopped at a limit or a memory
  // check ends it.
  struct KeptRealm {
    KeptRealm(JSContext* cx, std::string k) : key(std::move(k)), global(cx), fn(cx) {}
    std::string key;  // scope, NUL, script
    JS::PersistentRootedObject global;
    JS::PersistentRootedObject fn;  // its transform
    size_t calls = 0;
    size_t baseline = 0;  // its measured size when made
  };
  using RealmList = std::list<KeptRealm>;
  RealmList realms;  // most recently used first
  std::unordered_map<std::string_view, RealmList::iterator> realm_index;
  RealmList::iterator used_realm;  // the call's kept realm, realms.end() for a fresh one

  // The script cache: text -> stencil, most recently used at the front.
  using CacheList = std::list<std::pair<std::string, RefPtr<JS::Stencil>>>;
  CacheList cache_order;
  std::unordered_map<std::string_view, CacheList::iterator> cache;

  Impl(Watchdog& w, Options o) : watchdog(w), options(o), used_realm(realms.end()) {}

  size_t MeasureCall(JS::HandleObject g) {
    JS::TabSizes sizes;
    if (!JS::AddSizeOfTab(cx, g, MallocSize, nullptr, &sizes)) return 0;
    return sizes.objects_ + sizes.strings_ + sizes.private_ + sizes.other_;
  }

  // What the call added to its realm's measured size.
  size_t CallBytes(JS::HandleObject g) {
    const size_t size = MeasureCall(g);
    return size > measure_base ? size - measure_base : 0;
  }

  // A collection of g's zone alone (it empties the nursery too).
  void CollectZone(JS::HandleObject g) {
    JS::PrepareZoneForGC(cx, JS::GetObjectZone(g));
    JS::NonIncrementalGC(cx, JS::GCOptions::Normal, JS::GCReason::API);
    check_memory = false;  // that collection's own OnGc
  }

  // Whether the call holds more than its limit. In a kept realm, earlier calls' garbage is
  // collected before the call is found over it (`collected`: it was just now).
  bool OverLimit(JS::HandleObject g, bool collected) {
    if (CallBytes(g) <= limits.memory_bytes) return false;
    if (collected || used_realm == realms.end()) return true;
    CollectZone(g);
    return CallBytes(g) > limits.memory_bytes;
  }

  static bool OnInterrupt(JSContext* cx) {
    auto* self = static_cast<Impl*>(JS_GetContextPrivate(cx));
    if (self == nullptr || !self->in_call) return true;
    if (self->timed_out.load(std::memory_order_acquire)) return false;  // uncatchable: stops
    if (self->check_memory || self->check_memory_tick.exchange(false)) {
      self->check_memory = false;
      // The GC heap's growth first: cheap, and what a loop filling objects runs into.
      if (JS_GetGCParameter(cx, JSGC_BYTES) > self->gc_bytes_at_start + self->limits.memory_bytes) {
        self->out_of_memory = true;
        return false;
      }
      if (self->global == nullptr || !*self->global) return true;
      // Every kGcEveryTicks ticks, a collection of the call's zone first: it empties the nursery,
      // whose objects' malloc'd buffers (a growing array's elements) are counted nowhere until
      // then. Not on every tick: a collection costs about as much as a tick is long at 16 MiB.
      const bool collect = ++self->ticks % kGcEveryTicks == 0;
      if (collect) self->CollectZone(*self->global);
      if (self->OverLimit(*self->global, collect)) {
        self->out_of_memory = true;
        return false;
      }
    }
    return true;
  }

  // The call's malloc'd memory (string characters, array elements, typed arrays), which the GC
  // heap limit does not cover, is measured at the next interrupt check after each major
  // collection and after each watchdog tick (kMemoryTick of wall time): in SpiderMonkey 102,
  // growing malloc'd memory only triggers collections, and a fresh zone may not collect at all
  // before it runs out of time (measured: a[i] = 1.5 in a loop reached 142 MB in 200 ms).
  static void OnGc(JSContext* cx, JSGCStatus status, JS::GCReason /*reason*/, void* data) {
    auto* self = static_cast<Impl*>(data);
    if (status == JSGC_END && self->in_call) {
      self->check_memory = true;
      JS_RequestInterruptCallback(cx);
    }
  }

  // The pending error (or the limit that stopped the script) as a Status, the exception cleared.
  Status TakeError() {
    if (timed_out.load(std::memory_order_acquire)) {
      JS_ClearPendingException(cx);
      return Status::ResourceExhausted(CpuMessage(limits.cpu));
    }
    const Status oom =
        Status::ResourceExhausted("out of memory (limit " + FormatBytes(limits.memory_bytes) + ")");
    if (out_of_memory) {
      JS_ClearPendingException(cx);
      return oom;
    }
    if (!JS_IsExceptionPending(cx)) return Status::Internal("transform stopped without an error");
    JS::ExceptionStack stack(cx);
    if (!JS::StealPendingExceptionStack(cx, &stack)) {
      JS_ClearPendingException(cx);
      return Status::Internal("transform failed; its error could not be read");
    }
    // SpiderMonkey's out-of-memory exception is the string "out of memory".
    if (stack.exception().isString()) {
      bool same = false;
      if (JS_StringEqualsLiteral(cx, stack.exception().toString(), "out of memory", &same) &&
          same) {
        return oom;
      }
    }
    JS::ErrorReportBuilder report(cx);
    if (!report.init(cx, stack, JS::ErrorReportBuilder::NoSideEffects)) {
      JS_ClearPendingException(cx);
      return Status::InvalidArgument("uncaught exception (it could not be read)");
    }
    std::string message = report.toStringResult().c_str() ? report.toStringResult().c_str() : "";
    if (message == "out of memory" || message.starts_with("uncaught exception: out of memory")) {
      return oom;
    }
    if (report.report() != nullptr && report.report()->lineno > 0) {
      message += " (line " + std::to_string(report.report()->lineno) + ")";
    }
    return Status::InvalidArgument(std::move(message));
  }

  // The script compiled (from the cache when it was compiled before); nullptr with an exception
  // pending on a syntax error.
  RefPtr<JS::Stencil> Compile(std::string_view script) {
    if (auto it = cache.find(script); it != cache.end()) {
      cache_order.splice(cache_order.begin(), cache_order, it->second);
      return it->second->second;
    }
    JS::CompileOptions opts(cx);
    opts.setFileAndLine(kFileName, 1);
    JS::SourceText<mozilla::Utf8Unit> source;
    if (!source.init(cx, script.data(), script.size(), JS::SourceOwnership::Borrowed)) {
      return nullptr;
    }
    RefPtr<JS::Stencil> stencil = JS::CompileGlobalScriptToStencil(cx, opts, source);
    if (!stencil) return nullptr;
    if (options.script_cache_entries == 0) return stencil;
    if (cache.size() >= options.script_cache_entries) {
      cache.erase(cache_order.back().first);
      cache_order.pop_back();
    }
    cache_order.emplace_front(std::string(script), stencil);
    cache.emplace(cache_order.front().first, cache_order.begin());
    return stencil;
  }

  // The request as the script sees it (docs/transforms.md, "The request").
  bool BuildRequest(const Request& r, JS::MutableHandleObject out, JS::MutableHandleString body,
                    std::u16string& json_before) {
    JS::RootedObject obj(cx, JS_NewPlainObject(cx));
    if (!obj) return false;
    auto define = [&](const char* name, std::string_view value) {
      JS::RootedString s(cx, NewString(cx, value));
      return s && JS_DefineProperty(cx, obj, name, s, JSPROP_ENUMERATE);
    };
    if (!define("method", r.method) || !define("path", r.path) || !define("query", r.query)) {
      return false;
    }
    // Names lower-cased; a repeated header's values joined with ", " in arrival order.
    std::vector<std::pair<std::string, std::string>> joined;
    for (const auto& [name, value] : r.headers) {
      std::string lower = AsciiLower(name);
      auto it = std::find_if(joined.begin(), joined.end(),
                             [&](const auto& h) { return h.first == lower; });
      if (it == joined.end()) {
        joined.emplace_back(std::move(lower), value);
      } else {
        it->second += ", ";
        it->second += value;
      }
    }
    JS::RootedObject headers(cx, JS_NewPlainObject(cx));
    if (!headers) return false;
    for (const auto& [name, value] : joined) {
      JS::RootedString s(cx, NewString(cx, value));
      // Defined, not assigned: a header named __proto__ is an own property, not a prototype.
      if (!s || !JS_DefineProperty(cx, headers, name.c_str(), s, JSPROP_ENUMERATE)) return false;
    }
    if (!JS_DefineProperty(cx, obj, "headers", headers, JSPROP_ENUMERATE)) return false;
    body.set(NewString(cx, r.body));
    if (!body || !JS_DefineProperty(cx, obj, "body", body, JSPROP_ENUMERATE)) return false;
    JS::RootedValue json(cx, JS::NullValue());
    if (!r.body.empty() && !JS_ParseJSON(cx, body, &json)) {
      JS_ClearPendingException(cx);  // not JSON: json is null
      json.setNull();
    }
    if (!json.isNull()) {
      JS::RootedValue copy(cx, json);
      if (!JS_Stringify(cx, &copy, nullptr, JS::UndefinedHandleValue, AppendJson, &json_before)) {
        return false;
      }
    }
    if (!JS_DefineProperty(cx, obj, "json", json, JSPROP_ENUMERATE)) return false;
    out.set(obj);
    return true;
  }

  // Reads the string member `name` of `obj`: nullopt when absent (undefined), an error when it is
  // not a string. `field` names it in messages.
  Result<std::optional<std::string>> ReadString(JS::HandleObject obj, const char* name,
                                                const std::string& field) {
    JS::RootedValue v(cx);
    if (!JS_GetProperty(cx, obj, name, &v)) return TakeError();
    if (v.isUndefined()) return std::optional<std::string>();
    if (!v.isString()) return Status::InvalidArgument("returned " + field + " is not a string");
    HR_ASSIGN_OR_RETURN(std::string text, ToUtf8(v.toString(), field));
    return std::optional<std::string>(std::move(text));
  }

  Result<std::string> ToUtf8(JSString* str, const std::string& field) {
    // Checked before the characters are made flat: 'x'.repeat(1e9) is a cheap rope until then.
    if (JS::GetStringLength(str) > limits.memory_bytes) {
      return Status::ResourceExhausted("returned " + field + " is longer than the memory limit (" +
                                       FormatBytes(limits.memory_bytes) + ")");
    }
    JS::RootedString s(cx, str);
    JS::UniqueChars chars = JS_EncodeStringToUTF8(cx, s);
    if (!chars) return TakeError();
    return std::string(chars.get());
  }

  // The request the script returned, checked strictly (docs/transforms.md, "What it returns").
  Result<std::optional<Request>> ReadResult(JS::HandleValue rv, const Request& in,
                                            JS::HandleString body_in,
                                            const std::u16string& json_before) {
    if (rv.isNull()) return std::optional<Request>();
    if (!rv.isObject()) {
      std::string what;
      if (rv.isUndefined()) {
        what = "undefined";
      } else if (rv.isString()) {
        what = "a string";
      } else {
        JS::RootedValue copy(cx, rv);
        JS::RootedString s(cx, JS::ToString(cx, copy));
        JS::UniqueChars c = s ? JS_EncodeStringToUTF8(cx, s) : nullptr;
        what = c ? c.get() : "a value";
        JS_ClearPendingException(cx);
      }
      return Status::InvalidArgument("returned " + what + "; expected an object or null");
    }
    JS::RootedObject obj(cx, &rv.toObject());
    bool is_array = false;
    if (!JS::IsArrayObject(cx, obj, &is_array)) return TakeError();
    if (is_array) return Status::InvalidArgument("returned an array; expected an object or null");
    if (JS::IsCallable(obj)) {
      return Status::InvalidArgument("returned a function; expected an object or null");
    }
    if (JS::IsPromiseObject(obj)) {
      return Status::InvalidArgument(
          "returned a Promise; transform must return the request itself (no async)");
    }
    Request out;
    HR_ASSIGN_OR_RETURN(std::optional<std::string> method, ReadString(obj, "method", "method"));
    out.method = method ? std::move(*method) : in.method;
    if (!IsHttpToken(out.method)) {
      return Status::InvalidArgument("returned method \"" + out.method + "\" is not an HTTP method",
                                     "method");
    }
    HR_ASSIGN_OR_RETURN(std::optional<std::string> path, ReadString(obj, "path", "path"));
    out.path = path ? std::move(*path) : in.path;
    if (out.path.empty() || out.path[0] != '/') {
      return Status::InvalidArgument("returned path \"" + out.path + "\" does not start with '/'",
                                     "path");
    }
    for (unsigned char c : out.path) {
      if (c <= 0x20 || c >= 0x7F || c == '?' || c == '#') {
        return Status::InvalidArgument(
            "returned path \"" + out.path +
                "\" has a character a path cannot carry (percent-encode it; the query goes in "
                "query)",
            "path");
      }
    }
    HR_ASSIGN_OR_RETURN(std::optional<std::string> query, ReadString(obj, "query", "query"));
    out.query = query ? std::move(*query) : in.query;
    for (unsigned char c : out.query) {
      if (c <= 0x20 || c >= 0x7F || c == '#') {
        return Status::InvalidArgument("returned query \"" + out.query +
                                           "\" has a character a query cannot carry "
                                           "(percent-encode it)",
                                       "query");
      }
    }
    if (!out.query.empty() && out.query[0] == '?') {
      return Status::InvalidArgument("returned query starts with '?'; give it without", "query");
    }

    JS::RootedValue headers(cx);
    if (!JS_GetProperty(cx, obj, "headers", &headers)) return TakeError();
    if (headers.isUndefined()) {
      out.headers = in.headers;
    } else {
      HR_RETURN_IF_ERROR(ReadHeaders(headers, out.headers));
    }

    // The body: a changed `body` string is sent as it is; otherwise a changed `json` is sent
    // serialized; otherwise the body that arrived, byte for byte.
    JS::RootedValue body(cx);
    if (!JS_GetProperty(cx, obj, "body", &body)) return TakeError();
    bool body_changed = false;
    if (!body.isUndefined()) {
      if (!body.isString()) return Status::InvalidArgument("returned body is not a string", "body");
      if (body.toString() != body_in.get()) {
        int32_t order = 0;
        if (!JS_CompareStrings(cx, body.toString(), body_in, &order)) return TakeError();
        body_changed = order != 0;
      }
    }
    JS::RootedValue json(cx);
    if (!JS_GetProperty(cx, obj, "json", &json)) return TakeError();
    std::u16string json_after;
    bool json_changed = false;
    if (!json.isNullOrUndefined()) {
      if (!JS_Stringify(cx, &json, nullptr, JS::UndefinedHandleValue, AppendJson, &json_after)) {
        Status s = TakeError();
        if (s.code() != Status::Code::kInvalidArgument) return s;
        return Status::InvalidArgument("returned json cannot be serialized: " + s.message(),
                                       "json");
      }
      if (json_after.empty()) {
        return Status::InvalidArgument("returned json cannot be serialized as JSON", "json");
      }
      json_changed = json_after != json_before;
    }
    if (body_changed && json_changed) {
      return Status::InvalidArgument(
          "returned both a changed body and a changed json; change only one of them", "body");
    }
    if (body_changed) {
      HR_ASSIGN_OR_RETURN(out.body, ToUtf8(body.toString(), "body"));
    } else if (json_changed) {
      AppendUtf8(json_after, out.body);
      const bool has_type = std::any_of(out.headers.begin(), out.headers.end(), [](const auto& h) {
        return AsciiEqualsIgnoreCase(h.first, "content-type");
      });
      if (!has_type) out.headers.emplace_back("content-type", "application/json");
    } else {
      out.body = in.body;
    }
    return std::optional<Request>(std::move(out));
  }

  Status ReadHeaders(JS::HandleValue v, std::vector<std::pair<std::string, std::string>>& out) {
    bool is_array = false;
    if (v.isObject() && !JS::IsArrayObject(cx, v, &is_array)) return TakeError();
    if (!v.isObject() || is_array || JS::IsCallable(&v.toObject())) {
      return Status::InvalidArgument("returned headers is not an object of name: string",
                                     "headers");
    }
    JS::RootedObject obj(cx, &v.toObject());
    JS::Rooted<JS::IdVector> ids(cx, JS::IdVector(cx));
    if (!JS_Enumerate(cx, obj, &ids)) return TakeError();
    for (size_t i = 0; i < ids.length(); ++i) {
      JS::RootedId id(cx, ids[i]);
      JS::RootedValue name_value(cx);
      if (!JS_IdToValue(cx, id, &name_value)) return TakeError();
      JS::RootedString name_string(cx, JS::ToString(cx, name_value));
      if (!name_string) return TakeError();
      JS::UniqueChars name_chars = JS_EncodeStringToUTF8(cx, name_string);
      if (!name_chars) return TakeError();
      std::string name = name_chars.get();
      const std::string field = "headers[\"" + name + "\"]";
      if (!IsHttpToken(name)) {
        return Status::InvalidArgument(
            "returned headers has \"" + name + "\", which is not a header name", "headers");
      }
      JS::RootedValue value(cx);
      if (!JS_GetPropertyById(cx, obj, id, &value)) return TakeError();
      if (!value.isString()) {
        return Status::InvalidArgument("returned " + field + " is not a string", field);
      }
      HR_ASSIGN_OR_RETURN(std::string text, ToUtf8(value.toString(), field));
      if (text.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
        return Status::InvalidArgument("returned " + field + " contains a line break or NUL",
                                       field);
      }
      out.emplace_back(std::move(name), std::move(text));
    }
    return Status::Ok();
  }

  // Runs f, hookrelay's own work for the call (making, freezing and measuring its realm), without
  // charging its CPU to the script: the budget is put out of reach while it runs (the watchdog
  // may look at any moment), then moved on by what it took; `cpu` leaves it out too.
  template <typename F>
  auto Uncharged(F f) {
    constexpr std::chrono::nanoseconds kAllowance = std::chrono::hours(1);
    const std::chrono::nanoseconds start = Watchdog::ThreadCpuNow();
    watchdog.Extend(token, kAllowance);
    auto result = f();
    const std::chrono::nanoseconds spent = Watchdog::ThreadCpuNow() - start;
    watchdog.Extend(token, spent - kAllowance);
    harden_cpu += spent;
    return result;
  }

  // A new global in a new compartment and zone, with only the standard classes.
  JSObject* NewGlobal() {
    JS::RealmOptions realm_options;
    realm_options.creationOptions()
        .setNewCompartmentAndZone()
        .setSharedMemoryAndAtomicsEnabled(false)
        .setDefineSharedArrayBufferConstructor(false);
    return JS_NewGlobalObject(cx, &kGlobalClass, nullptr, JS::FireOnNewGlobalHook, realm_options);
  }

  // In g's realm (entered): runs the script's top level and finds its transform function;
  // `harden`: the standard classes frozen after the top level (kHarden).
  Status Prepare(JS::HandleObject g, std::string_view script, bool harden,
                 JS::MutableHandleObject fn) {
    JS::RootedValue freeze(cx);
    if (harden) {
      const bool ok = Uncharged([&] {
        // Every standard class made now (they are otherwise made on first use), then captured.
        JS::CompileOptions opts(cx);
        opts.setFileAndLine("hookrelay-harden.js", 1);
        JS::SourceText<mozilla::Utf8Unit> source;
        return JS::InitRealmStandardClasses(cx) &&
               source.init(cx, kHarden, std::char_traits<char>::length(kHarden),
                           JS::SourceOwnership::Borrowed) &&
               JS::Evaluate(cx, opts, source, &freeze);
      });
      if (!ok) return TakeError();
    }
    RefPtr<JS::Stencil> stencil = Compile(script);
    if (!stencil) return TakeError();
    JS::CompileOptions opts(cx);
    opts.setFileAndLine(kFileName, 1);
    JS::InstantiateOptions instantiate(opts);
    JS::RootedScript compiled(cx, JS::InstantiateGlobalStencil(cx, instantiate, stencil));
    if (!compiled) return TakeError();
    JS::RootedValue ignored(cx);
    if (!JS_ExecuteScript(cx, compiled, &ignored)) return TakeError();
    JS::RootedValue value(cx);
    if (!JS_GetProperty(cx, g, "transform", &value)) return TakeError();
    if (!value.isObject() || !JS::IsCallable(&value.toObject())) {
      return Status::InvalidArgument("the script does not define function transform(request)");
    }
    fn.set(&value.toObject());
    if (harden && !Uncharged([&] {
          return JS_CallFunctionValue(cx, g, freeze, JS::HandleValueArray::empty(), &ignored);
        })) {
      return TakeError();
    }
    return Status::Ok();
  }

  static std::string RealmKey(std::string_view scope, std::string_view script) {
    std::string key;
    key.reserve(scope.size() + 1 + script.size());
    key.append(scope).push_back('\0');
    key.append(script);
    return key;
  }

  // Keeps the prepared realm g for the scope's later calls of `script`; the least recently used
  // goes when Options::kept_realms are kept. Its baseline is measured after a collection.
  RealmList::iterator Keep(std::string_view scope, std::string_view script, JS::HandleObject g,
                           JS::HandleObject fn) {
    if (realms.size() >= std::max<size_t>(1, options.kept_realms)) Drop(std::prev(realms.end()));
    realms.emplace_front(cx, RealmKey(scope, script));
    KeptRealm& k = realms.front();
    k.global = g;
    k.fn = fn;
    CollectZone(g);
    k.baseline = MeasureCall(g);
    realm_index.emplace(k.key, realms.begin());
    return realms.begin();
  }

  void Drop(RealmList::iterator it) {
    realm_index.erase(it->key);
    realms.erase(it);  // unrooted: its zone goes at a later collection
  }

  // After a call in a kept realm: counted, measured now and then, dropped when the call was
  // stopped at a limit (cut off anywhere, its garbage to go) or failed inside the engine, when
  // it holds more than the limit, or after kRealmCalls. A thrown error keeps it: the script's
  // own to handle, and making a realm costs about 4 ms.
  void AfterKeptCall(Result<Outcome>& result, std::chrono::microseconds cpu) {
    KeptRealm& k = *used_realm;
    ++k.calls;
    bool drop = k.calls >= kRealmCalls ||
                (!result.ok() && result.status().code() != Status::Code::kInvalidArgument);
    if (!drop && (k.calls % kRealmMeasureEvery == 0 || cpu >= kRealmMeasureAfterCpu)) {
      JS::RootedObject g(cx, k.global);
      JSAutoRealm realm(cx, g);
      measure_base = k.baseline;
      if (OverLimit(g, /*collected=*/false)) {
        result = Status::ResourceExhausted("out of memory (limit " +
                                           FormatBytes(limits.memory_bytes) + ")");
        drop = true;
      } else {
        result->memory_bytes = CallBytes(g);
      }
    }
    if (drop) Drop(used_realm);
    used_realm = realms.end();
  }

  Result<Outcome> Run(std::string_view script, const Request& request, std::string_view scope,
                      bool check_only) {
    // Collect garbage when it adds up (earlier fresh calls' zones, kept realms' old objects), so
    // it does not count against this call's heap limit and the memory goes back.
    if (JS_GetGCParameter(cx, JSGC_BYTES) > baseline_gc_bytes + kGarbageBeforeGc) JS_GC(cx);
    const size_t gc_now = JS_GetGCParameter(cx, JSGC_BYTES);
    gc_bytes_at_start = gc_now;
    ticks = 0;
    // The hard backstop: twice the limit of GC heap. The limit itself is checked on the
    // measured size (MeasureCall), since near a hard GC heap limit SpiderMonkey collects on every
    // allocation and a filling loop slows to a crawl instead of failing (measured: 1 s of CPU).
    JS_SetGCParameter(
        cx, JSGC_MAX_BYTES,
        static_cast<uint32_t>(std::min<size_t>(gc_now + 2 * limits.memory_bytes, UINT32_MAX)));
    JS_SetGCParameter(cx, JSGC_MALLOC_THRESHOLD_BASE,
                      static_cast<uint32_t>(std::max<size_t>(1, limits.memory_bytes >> 20)));

    const bool keep = !scope.empty() && !check_only;
    used_realm = realms.end();
    if (keep) {
      if (auto it = realm_index.find(RealmKey(scope, script)); it != realm_index.end()) {
        used_realm = it->second;
        realms.splice(realms.begin(), realms, used_realm);
      }
    }
    JS::RootedObject g(cx);
    JS::RootedObject fn(cx);
    if (used_realm != realms.end()) {
      g = used_realm->global;
      fn = used_realm->fn;
      measure_base = used_realm->baseline;
    } else {
      g = Uncharged([this] { return NewGlobal(); });
      if (!g) return TakeError();
      measure_base = 0;
    }
    global = &g;
    JSAutoRealm realm(cx, g);
    if (!fn) {
      HR_RETURN_IF_ERROR(Prepare(g, script, /*harden=*/!check_only, &fn));
      if (check_only) return Outcome{};
      if (keep) {
        used_realm = Uncharged([&] { return Keep(scope, script, g, fn); });
        measure_base = used_realm->baseline;
      } else {
        // The call is charged for what it adds to the realm.
        measure_base = Uncharged([&] { return MeasureCall(g); });
      }
    }

    JS::RootedObject req(cx);
    JS::RootedString body(cx);
    std::u16string json_before;
    if (!BuildRequest(request, &req, &body, json_before)) return TakeError();
    JS::RootedValueArray<1> args(cx);
    args[0].setObject(*req);
    JS::RootedValue fn_value(cx, JS::ObjectValue(*fn));
    JS::RootedValue rv(cx);
    if (!JS_CallFunctionValue(cx, g, fn_value, args, &rv)) return TakeError();
    HR_ASSIGN_OR_RETURN(std::optional<Request> out, ReadResult(rv, request, body, json_before));
    Outcome outcome;
    outcome.request = std::move(out);
    // A fresh realm is measured at the end of every call; a kept one now and then
    // (AfterKeptCall), its memory checked during the call as any.
    if (used_realm == realms.end()) {
      outcome.memory_bytes = CallBytes(g);
      if (outcome.memory_bytes > limits.memory_bytes) {
        return Status::ResourceExhausted("out of memory (limit " +
                                         FormatBytes(limits.memory_bytes) + ")");
      }
    }
    return outcome;
  }
};

Sandbox::Sandbox(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<Sandbox>> Sandbox::Create(Watchdog& watchdog, Options options) {
  if (!StartEngine()) return Status::Internal("SpiderMonkey failed to start (JS_Init)");
  auto impl = std::make_unique<Impl>(watchdog, options);
  // The context's GC heap starts unbounded; each call sets its own bound (JSGC_MAX_BYTES).
  impl->cx = JS_NewContext(JS::DefaultHeapMaxBytes);
  if (impl->cx == nullptr) return Status::Internal("SpiderMonkey could not make a context");
  JSContext* cx = impl->cx;
  JS::ContextOptionsRef(cx).setWasm(false).setAsmJS(false);
  JS_SetNativeStackQuota(cx, options.native_stack_quota);
  if (!JS::InitSelfHostedCode(cx)) {
    JS_DestroyContext(cx);
    return Status::Internal("SpiderMonkey could not initialise its self-hosted code");
  }
  JS_SetContextPrivate(cx, impl.get());
  if (!JS_AddInterruptCallback(cx, &Impl::OnInterrupt)) {
    JS_DestroyContext(cx);
    return Status::Internal("SpiderMonkey refused the interrupt callback");
  }
  JS_SetGCCallback(cx, &Impl::OnGc, impl.get());
  live_contexts.fetch_add(1);
  impl->baseline_gc_bytes = JS_GetGCParameter(cx, JSGC_BYTES);
  return std::unique_ptr<Sandbox>(new Sandbox(std::move(impl)));
}

Sandbox::~Sandbox() {
  impl_->realm_index.clear();
  impl_->realms.clear();  // their roots go before the context
  impl_->cache.clear();
  impl_->cache_order.clear();
  JS_DestroyContext(impl_->cx);
  live_contexts.fetch_sub(1);
}

size_t Sandbox::CachedScripts() const { return impl_->cache.size(); }

size_t Sandbox::KeptRealms() const { return impl_->realms.size(); }

size_t Sandbox::KeptRealmBytes() const {
  size_t bytes = 0;
  for (const Impl::KeptRealm& k : impl_->realms) bytes += k.baseline;
  return bytes;
}

Status Sandbox::Check(std::string_view script, const Limits& limits) {
  return Execute(script, Request{}, limits, {}, /*check_only=*/true).status();
}

Result<Outcome> Sandbox::Call(std::string_view script, const Request& request, const Limits& limits,
                              std::string_view scope) {
  return Execute(script, request, limits, scope, /*check_only=*/false);
}

Result<Outcome> Sandbox::Execute(std::string_view script, const Request& request,
                                 const Limits& limits, std::string_view scope, bool check_only) {
  Impl& s = *impl_;
  s.limits = limits;
  s.timed_out.store(false, std::memory_order_release);
  s.check_memory = false;
  s.check_memory_tick.store(false);
  s.out_of_memory = false;
  s.in_call = true;
  s.harden_cpu = std::chrono::nanoseconds(0);
  const std::chrono::nanoseconds cpu_start = Watchdog::ThreadCpuNow();
  s.token = s.watchdog.Arm(
      limits.cpu, kMemoryTick,
      [&s](Watchdog::Event e) {
        if (e == Watchdog::Event::kBudgetSpent) {
          s.timed_out.store(true, std::memory_order_release);
        } else {
          s.check_memory_tick.store(true, std::memory_order_release);
        }
        JS_RequestInterruptCallback(s.cx);
      },
      cpu_start);
  Result<Outcome> result = s.Run(script, request, scope, check_only);
  s.watchdog.Disarm(s.token);
  s.in_call = false;
  s.global = nullptr;
  JS_ClearPendingException(s.cx);
  const auto cpu = std::chrono::duration_cast<std::chrono::microseconds>(Watchdog::ThreadCpuNow() -
                                                                         cpu_start - s.harden_cpu);
  // A script can go past its CPU budget inside one native step (flattening a huge string) before
  // the interrupt is seen; it is refused all the same.
  if (result.ok() && s.timed_out.load(std::memory_order_acquire)) {
    result = Status::ResourceExhausted(CpuMessage(limits.cpu));
  }
  if (s.used_realm != s.realms.end()) s.AfterKeptCall(result, cpu);
  // A call that hit a limit may have left much garbage: give it back now.
  if (!result.ok() && result.status().code() == Status::Code::kResourceExhausted) JS_GC(s.cx);
  if (result.ok()) result->cpu = cpu;
  return result;
}

}  // namespace hookrelay::transform
