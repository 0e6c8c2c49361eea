// Dataset builders and readers shared by the tests in tests/fs/.
#ifndef CCFS_TESTS_FS_FS_TEST_UTIL_H_
#define CCFS_TESTS_FS_FS_TEST_UTIL_H_

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "testing/mount_fixture.h"

namespace ccfs::testing {

// Counts the opens of the entries of one directory (files and directories), as inotify reports
// them (IN_OPEN): the store's own open events, when the directory is in the data set. inotify
// merges an event with the same one before it while neither is read: read between opens.
class OpenEvents {
 public:
  explicit OpenEvents(const std::string& dir) : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    EXPECT_GE(fd_, 0);
    EXPECT_GE(inotify_add_watch(fd_, dir.c_str(), IN_OPEN), 0);
  }
  ~OpenEvents() { close(fd_); }
  OpenEvents(const OpenEvents&) = delete;
  OpenEvents& operator=(const OpenEvents&) = delete;

  // Opens of `name` since the last call.
  int Of(const std::string& name) {
    int n = 0;
    alignas(struct inotify_event) char buf[4096];
    for (ssize_t got; (got = read(fd_, buf, sizeof(buf))) > 0;) {
      for (char* p = buf; p < buf + got;) {
        auto* ev = reinterpret_cast<struct inotify_event*>(p);
        if (ev->len > 0 && name == ev->name) ++n;
        p += sizeof(struct inotify_event) + ev->len;
      }
    }
    return n;
  }

 private:
  int fd_;
};

// The errno of reading `path` whole, or 0 with *got filled.
inline int ReadPath(const std::string& path, std::string* got) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  got->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      int err = errno;
      close(fd);
      return err;
    }
    if (n == 0) break;
    got->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return 0;
}

// Text-like bytes (words from a small vocabulary): compresses roughly 2-3x with lz4.
inline std::string CompressibleBytes(size_t n, uint64_t seed) {
  static const char* const kWords[] = {"cache ", "page ", "buffer ", "tier ", "raw ",
                                       "compressed ", "hit ", "miss ", "ratio ", "dataset\n",
                                       "evict ", "clock ", "memory ", "thesis ", "zstd ", "lz4 "};
  std::mt19937_64 rng(seed);
  std::string out;
  out.reserve(n + 16);
  while (out.size() < n) {
    out += kWords[rng() % 16];
    if (rng() % 7 == 0) out += std::to_string(rng() % 100000);
  }
  out.resize(n);
  return out;
}

inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = rng();
    for (size_t k = 0; k < 8 && i + k < n; ++k) out[i + k] = static_cast<char>(w >> (8 * k));
  }
  return out;
}

// Writes a mixed dataset of about `total` bytes into `dir` and returns the relative file paths:
// compressible, incompressible and all-zero files, sizes on and off page boundaries, empty files,
// nested directories.
inline std::vector<std::string> MakeMixedDataset(const std::string& dir, size_t total) {
  std::vector<std::string> files;
  auto put = [&](const std::string& rel, const std::string& bytes) {
    WriteWholeFile(dir + "/" + rel, bytes);
    files.push_back(rel);
  };
  mkdir((dir + "/text").c_str(), 0755);
  mkdir((dir + "/bin").c_str(), 0755);
  mkdir((dir + "/bin/deep").c_str(), 0755);
  put("empty", "");
  put("one_byte", "x");
  put("page_minus_one", CompressibleBytes(8191, 1));
  put("page_plus_one", RandomBytes(8193, 2));
  put("zeros", std::string(300000, '\0'));
  size_t used = 8191 + 8193 + 300000 + 1;
  for (int i = 0; used < total; ++i) {
    size_t n = 250000 + 37 * i;  // never a whole number of pages
    if (i % 3 == 2) {
      put("bin/deep/random" + std::to_string(i), RandomBytes(n, 100 + i));
    } else {
      put("text/words" + std::to_string(i), CompressibleBytes(n, 200 + i));
    }
    used += n;
  }
  return files;
}

// The descriptors `pid` holds open on files under `dir` for reading (O_PATH ones, which only name
// an inode, left out): the daemon's read handles and open handles.
inline size_t OpenDataDescriptors(pid_t pid, const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code link_ec;
    const std::string target = std::filesystem::read_symlink(it->path(), link_ec).string();
    if (link_ec || target.rfind(dir + "/", 0) != 0) continue;
    const std::string info = ReadWholeFile(
        fmt::format("/proc/{}/fdinfo/{}", pid, it->path().filename().string()));
    const size_t at = info.find("flags:");
    if (at == std::string::npos) continue;
    const unsigned long flags = std::stoul(info.substr(at + 6), nullptr, 8);
    if ((flags & O_PATH) == 0) ++n;
  }
  return n;
}

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_FS_FS_TEST_UTIL_H_
