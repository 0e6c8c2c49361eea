// POSIX conformance harness: runs one script of system calls twice — once in a directory of
// DATASET reached directly, once in a sibling directory reached through the mount — and compares
// what each call returned and the errno it set, call by call, then the trees the two runs left.
//
// A script is a function of (Recorder&, base directory). It performs its calls with paths under
// the base and passes every result through the recorder: Ret() for plain return values, Fd() for
// calls that return a descriptor (only success/failure and errno are compared, descriptor numbers
// differ), Value() for data read back or stat fields. Scripts must not compare anything that
// legitimately differs between the two runs (inode numbers, st_dev, times not set explicitly).
#ifndef CCFS_TESTS_POSIX_POSIX_TEST_UTIL_H_
#define CCFS_TESTS_POSIX_POSIX_TEST_UTIL_H_

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/mount_fixture.h"

namespace ccfs::testing {

class Recorder {
 public:
  struct Entry {
    std::string what;
    long ret;
    int err;  // errno when ret < 0, else 0
    std::string value;
  };

  // Records a call's return value (and errno if it failed); returns `ret` unchanged.
  long Ret(const std::string& what, long ret) {
    entries_.push_back({what, ret, ret < 0 ? errno : 0, ""});
    return ret;
  }
  // Records only whether a descriptor-returning call succeeded; returns the descriptor.
  int Fd(const std::string& what, int fd) {
    entries_.push_back({what, fd >= 0 ? 0 : -1, fd < 0 ? errno : 0, ""});
    return fd;
  }
  void Value(const std::string& what, const std::string& value) {
    entries_.push_back({what, 0, 0, value});
  }
  // The fields of a stat that must agree between DATASET and the mount.
  void Stat(const std::string& what, const std::string& path, bool follow = true) {
    struct stat st;
    errno = 0;
    int r = follow ? stat(path.c_str(), &st) : lstat(path.c_str(), &st);
    if (r != 0) {
      Ret(what, r);
      return;
    }
    Value(what, "mode=" + std::to_string(st.st_mode) + " size=" + std::to_string(st.st_size) +
                    " nlink=" + std::to_string(st.st_nlink) + " uid=" + std::to_string(st.st_uid) +
                    " gid=" + std::to_string(st.st_gid));
  }
  // Reads the whole file at `path` (or the errno of the open).
  void Contents(const std::string& what, const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      Ret(what, -1);
      return;
    }
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
    if (n < 0) out += "<read error " + std::to_string(errno) + ">";
    close(fd);
    Value(what, out);
  }

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

// A short, printable form of a value (binary data is summarised by size and a hash).
inline std::string Show(const std::string& v) {
  bool printable = v.size() <= 200 && std::all_of(v.begin(), v.end(), [](char c) {
                     return c >= 32 && c < 127;
                   });
  if (printable) return "\"" + v + "\"";
  return "<" + std::to_string(v.size()) + " bytes, hash " +
         std::to_string(std::hash<std::string>{}(v)) + ">";
}

inline void ExpectSameRecords(const Recorder& direct, const Recorder& mounted) {
  const auto& a = direct.entries();
  const auto& b = mounted.entries();
  ASSERT_EQ(a.size(), b.size()) << "the scripts diverged";
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].what, b[i].what);
    EXPECT_TRUE(a[i].ret == b[i].ret && a[i].err == b[i].err && a[i].value == b[i].value)
        << "step " << i << " " << a[i].what << "\n  on DATASET: ret=" << a[i].ret
        << " errno=" << a[i].err << " (" << strerror(a[i].err) << ") " << Show(a[i].value)
        << "\n  via mount:  ret=" << b[i].ret << " errno=" << b[i].err << " ("
        << strerror(b[i].err) << ") " << Show(b[i].value);
  }
}

// Lists a tree (relative names, type, size, contents of regular files) for the final comparison.
inline void DescribeTree(const std::string& root, const std::string& rel,
                         std::vector<std::string>* out) {
  std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    std::string r = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (lstat((root + "/" + r).c_str(), &st) != 0) continue;
    std::string line = r + " mode=" + std::to_string(st.st_mode) +
                       " size=" + std::to_string(st.st_size) +
                       " nlink=" + std::to_string(st.st_nlink);
    if (S_ISREG(st.st_mode) && st.st_size < (64 << 20)) {
      line += " data=" + std::to_string(std::hash<std::string>{}(ReadWholeFile(root + "/" + r)));
    }
    out->push_back(line);
    if (S_ISDIR(st.st_mode)) DescribeTree(root, r, out);
  }
}

// Mounts a small cache (so the compressed tier and eviction take part) once per test.
class PosixTest : public MountTest {
 protected:
  void SetUp() override {
    MountOrDie({"-o", "memory=2MiB,compressed_percent=50,request_threads=2"});
  }

  // Runs `script` on DATASET/direct and on MNT/mounted, compares every step, then compares the
  // trees both runs left (as seen directly in DATASET).
  void Compare(const std::function<void(Recorder&, const std::string&)>& script) {
    const std::string direct = ds_.DataPath("direct");
    const std::string via = ds_.MntPath("mounted");
    ASSERT_EQ(mkdir(direct.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(via.c_str(), 0755), 0) << strerror(errno);
    Recorder a, b;
    script(a, direct);
    script(b, via);
    ExpectSameRecords(a, b);
    std::vector<std::string> ta, tb;
    DescribeTree(direct, "", &ta);
    DescribeTree(ds_.DataPath("mounted"), "", &tb);
    EXPECT_EQ(ta, tb) << "the two runs left different trees in DATASET";
  }
};

// ---- acting as another user (tests that mount with allow_other) ---------------------------------

inline constexpr uid_t kNobody = 65534;

// The permission and set-id bits of `mode`, as chmod spells them ("04755").
inline std::string Octal(mode_t mode) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%05o", mode & 07777);
  return buf;
}

// Runs `fn` in a child process whose every user id is `uid` and group id `gid`, with supplementary
// groups `groups` (so without any capability), and returns what it returned.
inline std::string AsUser(uid_t uid, gid_t gid, const std::vector<gid_t>& groups,
                          const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    if (setgroups(groups.size(), groups.data()) != 0 || setresgid(gid, gid, gid) != 0 ||
        setresuid(uid, uid, uid) != 0) {
      out = "cannot become " + std::to_string(uid) + ": " + strerror(errno);
    } else {
      out = fn();
    }
    [[maybe_unused]] ssize_t n = write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

// ... as user and group 65534, with no supplementary group.
inline std::string AsNobody(const std::function<std::string()>& fn) {
  return AsUser(kNobody, kNobody, {}, fn);
}

// The mount lets other users in (allow_other, so the kernel checks permissions), and DATASET's
// directories are reachable by them.
class AllowOtherTest : public PosixTest {
 protected:
  void SetUp() override { MountForOthers(""); }

  // `more`: further -o options, each after a comma.
  void MountForOthers(const std::string& more) {
    ASSERT_EQ(chmod(ds_.root().c_str(), 0755), 0);
    ASSERT_EQ(chmod(ds_.data().c_str(), 0755), 0);
    MountOrDie({"-o", "memory=2MiB,compressed_percent=50,allow_other" + more});
  }
};

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_POSIX_POSIX_TEST_UTIL_H_
