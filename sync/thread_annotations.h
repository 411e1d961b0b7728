// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html).
// Under clang with -Wthread-safety the compiler checks that every GUARDED_BY member is touched
// only with its mutex held and every REQUIRES function is called with it; under other compilers
// the macros expand to nothing. Annotate locks with sync::Mutex (mutex.h beside this file):
// std::mutex in libstdc++ carries no annotations, so the analysis cannot see it.
#pragma once

#if defined(__clang__)
#define TEPHRA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TEPHRA_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are capabilities (locks) of the given kind ("mutex").
#define CAPABILITY(x) TEPHRA_THREAD_ANNOTATION(capability(x))
// On a class: an RAII object that holds a capability for its lifetime.
#define SCOPED_CAPABILITY TEPHRA_THREAD_ANNOTATION(scoped_lockable)

// On a member: read and written only with the mutex held.
#define GUARDED_BY(x) TEPHRA_THREAD_ANNOTATION(guarded_by(x))
// On a pointer member: the pointee is read and written only with the mutex held.
#define PT_GUARDED_BY(x) TEPHRA_THREAD_ANNOTATION(pt_guarded_by(x))
// On a mutex member: the lock order between it and the others named.
#define ACQUIRED_BEFORE(...) TEPHRA_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) TEPHRA_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// On a function: the caller holds the capabilities (exclusively / at least shared).
#define REQUIRES(...) TEPHRA_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) TEPHRA_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// On a function: the caller must not hold the capabilities (the function takes them).
#define EXCLUDES(...) TEPHRA_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// On a function: it takes / gives back the capabilities (no argument: `this`).
#define ACQUIRE(...) TEPHRA_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) TEPHRA_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) TEPHRA_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) TEPHRA_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) TEPHRA_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
// On a function: takes the capability when it returns the given value.
#define TRY_ACQUIRE(...) TEPHRA_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) TEPHRA_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))
// On a function: it fails (at run time) unless the caller holds the capability; from there on
// the analysis assumes it is held.
#define ASSERT_CAPABILITY(x) TEPHRA_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) TEPHRA_THREAD_ANNOTATION(assert_shared_capability(x))
// On a function: it returns a reference to the capability named.
#define RETURN_CAPABILITY(x) TEPHRA_THREAD_ANNOTATION(lock_returned(x))

// On a function: its body is not checked. Only for the lock primitives themselves and for code
// whose locking the analysis cannot follow; say why next to each use.
#define NO_THREAD_SAFETY_ANALYSIS TEPHRA_THREAD_ANNOTATION(no_thread_safety_analysis)
