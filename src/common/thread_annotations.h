#pragma once

// Clang thread-safety analysis attributes (-Wthread-safety); they expand to nothing elsewhere.
// See https://clang.llvm.org/docs/ThreadSafetyAnalysis.html and docs/thread_safety.md.
//
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_);      // read or written only with mu_ held
//   void Bump() REQUIRES(mu_);        // callers hold mu_
//   void Reset() EXCLUDES(mu_);       // callers must not hold mu_ (it takes it)

#if defined(__clang__)
#define HOOKRELAY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define HOOKRELAY_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (Mutex); `x` names the kind in messages ("mutex").
#define CAPABILITY(x) HOOKRELAY_THREAD_ANNOTATION(capability(x))
// An RAII type that holds a capability for its lifetime (MutexLock).
#define SCOPED_CAPABILITY HOOKRELAY_THREAD_ANNOTATION(scoped_lockable)

// Data members: the member (GUARDED_BY) or what it points to (PT_GUARDED_BY) is accessed only
// with the capability held.
#define GUARDED_BY(x) HOOKRELAY_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) HOOKRELAY_THREAD_ANNOTATION(pt_guarded_by(x))

// Lock ordering between capabilities.
#define ACQUIRED_BEFORE(...) HOOKRELAY_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) HOOKRELAY_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// Functions: the caller must hold (REQUIRES) or must not hold (EXCLUDES) the capabilities.
#define REQUIRES(...) HOOKRELAY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) HOOKRELAY_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) HOOKRELAY_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// Functions that take or give up a capability (on a capability type with no argument: `this`).
#define ACQUIRE(...) HOOKRELAY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) HOOKRELAY_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) HOOKRELAY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) HOOKRELAY_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) HOOKRELAY_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) \
  HOOKRELAY_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))

// A run-time check that the capability is held; the analysis then assumes it is.
#define ASSERT_CAPABILITY(x) HOOKRELAY_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) HOOKRELAY_THREAD_ANNOTATION(assert_shared_capability(x))

// A function returning a reference to the capability `x` (for accessors).
#define RETURN_CAPABILITY(x) HOOKRELAY_THREAD_ANNOTATION(lock_returned(x))

// Turns the analysis off for one function. Use rarely, and say why beside each use.
#define NO_THREAD_SAFETY_ANALYSIS HOOKRELAY_THREAD_ANNOTATION(no_thread_safety_analysis)
