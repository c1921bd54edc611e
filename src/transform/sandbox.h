#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "common/result.h"
#include "transform/transform.h"
#include "transform/watchdog.h"

namespace hookrelay::transform {

// One SpiderMonkey context: runs transforms on the thread that created it, one call at a time.
//
// Where a call runs (docs/transforms.md, "Sandbox"):
//   - without a scope, in a fresh global in a fresh zone (compartment and heap of its own), made
//     for that call and dropped after it: nothing a script does is seen by any later call, and
//     its memory is measured exactly (the test and preview API, the catalog's check);
//   - with a scope (the delivery engine passes the destination's name), in the global kept for
//     that scope and script on this thread: made once, then reused by the scope's calls.
//     Another scope, or another script, never shares it, so nothing reaches another
//     destination; the script's own globals (`let n = 0` at top level) do live on between its
//     calls, until the realm is made again — after 1000 calls, after a call stopped at its CPU
//     or memory limit, or when it holds more than the memory limit.
// Either way the standard classes and every object they reach (prototypes, methods) are frozen
// once the script's top level has run, so no call changes what a later call finds there.
// Compiled scripts (stencils) are cached per sandbox, keyed by the script's text, so a script
// is parsed once per thread.
//
// The global has only the standard ECMAScript classes: no print/load/read/os/require, no timers,
// no Debugger, no module loader, no SharedArrayBuffer/Atomics, no WebAssembly/asm.js
// (docs/transforms.md, "Sandbox").
//
// Not thread-safe: create, call and destroy it on one thread (SpiderMonkey ties a JSContext to
// the thread that made it). The watchdog must outlive it.
class Sandbox {
 public:
  struct Options {
    // The most native stack a script may use before "too much recursion"; below the thread's
    // stack size with room to spare (worker threads have glibc's default 8 MiB).
    size_t native_stack_quota = size_t{1} << 20;
    // Compiled scripts kept (least recently used goes first).
    size_t script_cache_entries = 64;
    // Scopes' realms kept (least recently used goes first; at least 1). About 260 KB each; a
    // realm made again costs about 4 ms, so this should cover the destinations with a transform
    // that receive traffic at the same time.
    size_t kept_realms = 64;
  };

  // Starts the engine on first use in the process (JS_Init; it is never shut down) and makes a
  // context on the calling thread. Internal error when SpiderMonkey cannot start.
  static Result<std::unique_ptr<Sandbox>> Create(Watchdog& watchdog, Options options);
  static Result<std::unique_ptr<Sandbox>> Create(Watchdog& watchdog) {
    return Create(watchdog, Options());
  }
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Runs `script`'s transform(request) within `limits` (taken as given: Runner checks them
  // against the server's maximum). Errors, with messages meant for the script's author:
  //   InvalidArgument: a syntax error or thrown error, "SyntaxError: ... (line 2)",
  //     "TypeError: request.json is null (line 3)"; no transform function; an invalid return,
  //     "returned 42; expected an object or null", "returned headers[\"x\"] is not a string".
  //   ResourceExhausted: "exceeded 50 ms of CPU time", "out of memory (limit 16 MiB)".
  // After any error the sandbox is ready for the next call. `scope` empty: a fresh realm;
  // otherwise the scope's kept realm for this script (see above).
  Result<Outcome> Call(std::string_view script, const Request& request, const Limits& limits,
                       std::string_view scope = {});
  // Compiles and runs `script` (its top level) within `limits` and checks that it defines
  // function transform, without calling it: the errors of Call that no request can cause
  // (a syntax error, a top-level throw or loop, no transform function).
  Status Check(std::string_view script, const Limits& limits);

  // Compiled scripts in the cache now, scopes' realms kept, and what those realms measured when
  // made (the standard classes, frozen, and the scripts' top levels; for tests and benchmarks).
  size_t CachedScripts() const;
  size_t KeptRealms() const;
  size_t KeptRealmBytes() const;

  struct Impl;

 private:
  explicit Sandbox(std::unique_ptr<Impl> impl);
  Result<Outcome> Execute(std::string_view script, const Request& request, const Limits& limits,
                          std::string_view scope, bool check_only);
  std::unique_ptr<Impl> impl_;
};

// "16 MiB", "512 KiB", "1000 bytes": how limits appear in messages.
std::string FormatBytes(size_t bytes);

}  // namespace hookrelay::transform
