// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html).
//
// They state which mutex guards which member and which functions must (or must not) hold it, so
// that a clang build with -Wthread-safety (CMake option CCFS_THREAD_SAFETY) checks lock ownership
// at compile time. Under gcc, and under clang without the attributes, every macro expands to
// nothing: they change no code.
//
// std::mutex carries no annotations in libstdc++, so guarded members use ccfs::Mutex
// (util/mutex.h), which does.
#ifndef CCFS_UTIL_THREAD_ANNOTATIONS_H_
#define CCFS_UTIL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define CCFS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CCFS_THREAD_ANNOTATION(x)
#endif

// A class that is a lock (a capability).
#define CAPABILITY(x) CCFS_THREAD_ANNOTATION(capability(x))
// An RAII class that holds a lock for its lifetime.
#define SCOPED_CAPABILITY CCFS_THREAD_ANNOTATION(scoped_lockable)
// The member may be read or written only with `x` held.
#define GUARDED_BY(x) CCFS_THREAD_ANNOTATION(guarded_by(x))
// The pointed-to data may be accessed only with `x` held.
#define PT_GUARDED_BY(x) CCFS_THREAD_ANNOTATION(pt_guarded_by(x))
// Lock order: this lock is taken before / after the named ones.
#define ACQUIRED_BEFORE(...) CCFS_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) CCFS_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// The caller must hold the lock(s) (exclusively) when calling.
#define REQUIRES(...) CCFS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The function takes the lock(s) and returns holding them.
#define ACQUIRE(...) CCFS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
// The function tries to take the lock(s) and holds them when it returns `x` (true or false).
#define TRY_ACQUIRE(...) CCFS_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The function releases the lock(s) the caller held.
#define RELEASE(...) CCFS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// The function takes the lock(s) itself: the caller must not hold them.
#define EXCLUDES(...) CCFS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function returns a reference to the named lock.
#define RETURN_CAPABILITY(x) CCFS_THREAD_ANNOTATION(lock_returned(x))
// Checks nothing in this function: for code whose locking the analysis cannot follow. Say why.
#define NO_THREAD_SAFETY_ANALYSIS CCFS_THREAD_ANNOTATION(no_thread_safety_analysis)
#define ASSERT_CAPABILITY(x) CCFS_THREAD_ANNOTATION(assert_capability(x))

#endif  // CCFS_UTIL_THREAD_ANNOTATIONS_H_
