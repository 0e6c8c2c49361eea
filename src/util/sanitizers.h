// Which sanitizer this file is compiled with, the same answer under GCC and clang: GCC defines
// __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__, clang 14 only answers __has_feature. Defines
// CCFS_ASAN (AddressSanitizer), CCFS_TSAN (ThreadSanitizer) and CCFS_SANITIZED (either).
#ifndef CCFS_UTIL_SANITIZERS_H_
#define CCFS_UTIL_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__)
#define CCFS_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define CCFS_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(CCFS_ASAN)
#define CCFS_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(CCFS_TSAN)
#define CCFS_TSAN 1
#endif
#endif
#if defined(CCFS_ASAN) || defined(CCFS_TSAN)
#define CCFS_SANITIZED 1
#endif

#endif  // CCFS_UTIL_SANITIZERS_H_
