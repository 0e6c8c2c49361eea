// POSIX conformance: the same system calls on DATASET directly and through the mount give the same
// results, the same errno and the same bytes (see posix_test_util.h for the harness).
#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>

#include "fs/fs_test_util.h"
#include "posix/posix_test_util.h"

namespace ccfs::testing {
namespace {

std::string S(long v) { return std::to_string(v); }

// pread of `len` bytes at `off` recorded as a value (or an errno).
void ReadAt(Recorder& r, const std::string& what, int fd, off_t off, size_t len) {
  std::string buf(len, '\0');
  ssize_t n = pread(fd, buf.data(), len, off);
  if (n < 0) {
    r.Ret(what, n);
    return;
  }
  buf.resize(n);
  r.Value(what, buf);
}

TEST_F(PosixTest, CreateAndOpenFlags) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/f";
    int fd = r.Fd("creat excl", open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0640));
    r.Ret("write", write(fd, "hello", 5));
    r.Ret("close", close(fd));
    r.Fd("creat excl again", open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0640));
    r.Fd("open missing", open((d + "/missing").c_str(), O_RDONLY));
    r.Fd("O_DIRECTORY on a file", open(f.c_str(), O_RDONLY | O_DIRECTORY));
    r.Fd("dir O_WRONLY", open(d.c_str(), O_WRONLY));
    r.Fd("file as dir", open((f + "/x").c_str(), O_RDONLY));
    r.Fd("creat in missing dir", open((d + "/nodir/x").c_str(), O_CREAT | O_WRONLY, 0644));
    r.Stat("stat f", f);
    fd = r.Fd("rdonly", open(f.c_str(), O_RDONLY));
    r.Ret("write on rdonly", write(fd, "x", 1));
    ReadAt(r, "read rdonly", fd, 0, 100);
    close(fd);
    fd = r.Fd("wronly", open(f.c_str(), O_WRONLY));
    char c;
    r.Ret("read on wronly", read(fd, &c, 1));
    r.Ret("pwrite", pwrite(fd, "J", 1, 0));
    close(fd);
    r.Contents("after pwrite", f);
    fd = r.Fd("rdwr creat existing", open(f.c_str(), O_RDWR | O_CREAT, 0600));
    r.Ret("lseek end", lseek(fd, 0, SEEK_END));
    r.Ret("write at end", write(fd, "!", 1));
    r.Ret("lseek negative", lseek(fd, -100, SEEK_SET));
    close(fd);
    r.Contents("contents", f);
    r.Ret("symlink", symlink("f", (d + "/link").c_str()));
    r.Fd("O_NOFOLLOW on symlink", open((d + "/link").c_str(), O_RDONLY | O_NOFOLLOW));
    r.Contents("through symlink", d + "/link");
    r.Ret("mkdir", mkdir((d + "/sub").c_str(), 0750));
    r.Ret("mkdir existing", mkdir((d + "/sub").c_str(), 0750));
    r.Ret("creat in sub", close(open((d + "/sub/x").c_str(), O_CREAT | O_WRONLY, 0600)));
    r.Ret("rmdir non-empty", rmdir((d + "/sub").c_str()));
    r.Ret("unlink a dir", unlink((d + "/sub").c_str()));
    r.Ret("rmdir a file", rmdir(f.c_str()));
    r.Stat("stat sub", d + "/sub");
    r.Ret("chmod", chmod(f.c_str(), 0604));
    r.Stat("stat after chmod", f);
    r.Ret("truncate", truncate(f.c_str(), 3));
    r.Contents("after truncate", f);
    r.Ret("access W_OK", access(f.c_str(), W_OK));
    r.Ret("mknod fifo", mknod((d + "/fifo").c_str(), S_IFIFO | 0644, 0));
    r.Stat("stat fifo", d + "/fifo");
  });
}

TEST_F(PosixTest, AppendGoesToTheEndWhateverTheOffset) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/log";
    WriteWholeFile(f, CompressibleBytes(20000, 7));
    r.Contents("initial (fills the cache)", f);
    int a = r.Fd("open append 1", open(f.c_str(), O_WRONLY | O_APPEND));
    int b = r.Fd("open append 2", open(f.c_str(), O_RDWR | O_APPEND));
    for (int i = 0; i < 20; ++i) {
      std::string s = "line " + S(i) + "\n";
      int fd = i % 2 ? a : b;
      r.Ret("lseek 0", lseek(fd, 0, SEEK_SET));
      r.Ret("append " + S(i), write(fd, s.data(), s.size()));
      r.Ret("offset after append", lseek(fd, 0, SEEK_CUR));
    }
    // Linux: pwrite on an O_APPEND descriptor appends too.
    r.Ret("pwrite on append", pwrite(a, "PW", 2, 0));
    ReadAt(r, "read head via append fd", b, 0, 64);
    close(a);
    close(b);
    r.Contents("final", f);
  });
}

TEST_F(PosixTest, TruncateOnOpenDropsCachedPages) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/t";
    WriteWholeFile(f, RandomBytes(100000, 3));
    r.Contents("before", f);
    int fd = r.Fd("open O_TRUNC", open(f.c_str(), O_RDWR | O_TRUNC));
    r.Stat("size after O_TRUNC", f);
    ReadAt(r, "read after O_TRUNC", fd, 0, 4096);
    r.Ret("write small", pwrite(fd, "abc", 3, 0));
    ReadAt(r, "read small", fd, 0, 100000);
    r.Ret("ftruncate grow", ftruncate(fd, 50000));
    ReadAt(r, "grown part is zeros", fd, 0, 100000);
    r.Ret("ftruncate shrink", ftruncate(fd, 2));
    ReadAt(r, "after shrink", fd, 0, 100);
    close(fd);
    fd = r.Fd("O_TRUNC on O_RDONLY", open(f.c_str(), O_RDONLY | O_TRUNC));
    close(fd);
    r.Contents("final", f);
  });
}

TEST_F(PosixTest, RenameOverExisting) {
  Compare([](Recorder& r, const std::string& d) {
    WriteWholeFile(d + "/a", CompressibleBytes(30000, 1));
    WriteWholeFile(d + "/b", CompressibleBytes(30000, 2));
    r.Contents("b before", d + "/b");
    int old_b = r.Fd("keep b open", open((d + "/b").c_str(), O_RDONLY));
    r.Ret("rename a over b", rename((d + "/a").c_str(), (d + "/b").c_str()));
    r.Contents("b after (a's bytes)", d + "/b");
    ReadAt(r, "old b still readable", old_b, 0, 30000);
    close(old_b);
    r.Stat("a gone", d + "/a");
    mkdir((d + "/dir").c_str(), 0755);
    mkdir((d + "/full").c_str(), 0755);
    WriteWholeFile(d + "/full/x", "x");
    mkdir((d + "/empty").c_str(), 0755);
    r.Ret("file over dir", rename((d + "/b").c_str(), (d + "/dir").c_str()));
    r.Ret("dir over file", rename((d + "/dir").c_str(), (d + "/b").c_str()));
    r.Ret("dir over non-empty dir", rename((d + "/dir").c_str(), (d + "/full").c_str()));
    r.Ret("dir over empty dir", rename((d + "/dir").c_str(), (d + "/empty").c_str()));
    r.Ret("dir into itself", rename((d + "/full").c_str(), (d + "/full/sub").c_str()));
    r.Ret("missing source", rename((d + "/nope").c_str(), (d + "/b").c_str()));
    WriteWholeFile(d + "/c", "ccc");
    r.Ret("noreplace", renameat2(AT_FDCWD, (d + "/c").c_str(), AT_FDCWD, (d + "/b").c_str(),
                                 RENAME_NOREPLACE));
    r.Ret("exchange", renameat2(AT_FDCWD, (d + "/c").c_str(), AT_FDCWD, (d + "/b").c_str(),
                                RENAME_EXCHANGE));
    r.Contents("b after exchange", d + "/b");
    r.Contents("c after exchange", d + "/c");
    r.Ret("rename to same", rename((d + "/c").c_str(), (d + "/c").c_str()));
    r.Ret("rename across dirs", rename((d + "/c").c_str(), (d + "/full/c").c_str()));
    r.Contents("moved", d + "/full/c");
  });
}

TEST_F(PosixTest, UnlinkOfAnOpenFile) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/u";
    WriteWholeFile(f, RandomBytes(40000, 9));
    int fd = r.Fd("open", open(f.c_str(), O_RDWR));
    ReadAt(r, "read before", fd, 0, 40000);
    r.Ret("unlink", unlink(f.c_str()));
    r.Stat("path gone", f);
    struct stat st;
    r.Ret("fstat", fstat(fd, &st));
    r.Value("nlink 0, size kept", S(st.st_nlink) + " " + S(st.st_size));
    ReadAt(r, "read after unlink", fd, 0, 40000);
    r.Ret("write after unlink", pwrite(fd, "zz", 2, 100));
    ReadAt(r, "read own write", fd, 90, 20);
    WriteWholeFile(f, "new file, same name");
    r.Contents("new file", f);
    ReadAt(r, "old still old", fd, 0, 10);
    r.Ret("close", close(fd));
    r.Ret("unlink again", unlink(f.c_str()));
    r.Ret("unlink missing", unlink(f.c_str()));
  });
}

TEST_F(PosixTest, SparseFilesAndHoles) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/sparse";
    int fd = r.Fd("create", open(f.c_str(), O_RDWR | O_CREAT, 0644));
    std::string block = CompressibleBytes(4096, 11);
    r.Ret("write at 0", pwrite(fd, block.data(), block.size(), 0));
    r.Ret("write at 1MiB", pwrite(fd, block.data(), block.size(), 1 << 20));
    r.Ret("ftruncate 3MiB", ftruncate(fd, 3 << 20));
    r.Ret("fsync", fsync(fd));
    for (off_t off : {0L, 100L, 4096L, 8192L, 500000L, (1L << 20) + 17, 2L << 20, 3L << 20,
                      (3L << 20) + 1}) {
      r.Ret("SEEK_DATA " + S(off), lseek(fd, off, SEEK_DATA));
      r.Ret("SEEK_HOLE " + S(off), lseek(fd, off, SEEK_HOLE));
    }
    ReadAt(r, "hole reads as zeros", fd, 4096, 20000);
    ReadAt(r, "data across a hole edge", fd, (1 << 20) - 100, 8192);
    ReadAt(r, "tail hole", fd, (3 << 20) - 5000, 10000);
    ReadAt(r, "past the end", fd, 4 << 20, 10);
    struct stat st;
    fstat(fd, &st);
    r.Value("size", S(st.st_size));
    close(fd);
  });
}

TEST_F(PosixTest, OffsetsBeyondFourGiB) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/big";
    int fd = r.Fd("create", open(f.c_str(), O_RDWR | O_CREAT, 0644));
    const off_t four = 4LL << 30;
    std::string a = RandomBytes(10000, 21), b = CompressibleBytes(20000, 22);
    r.Ret("write just below 4GiB", pwrite(fd, a.data(), a.size(), four - 5000));
    r.Ret("write at 5GiB+123", pwrite(fd, b.data(), b.size(), (5LL << 30) + 123));
    ReadAt(r, "read across 4GiB", fd, four - 6000, 12000);
    ReadAt(r, "read at 5GiB", fd, (5LL << 30), 20200);
    ReadAt(r, "hole at 4.5GiB", fd, four + (512LL << 20), 8192);
    r.Ret("lseek end", lseek(fd, 0, SEEK_END));
    r.Ret("SEEK_DATA from 4GiB", lseek(fd, four, SEEK_DATA));
    r.Ret("SEEK_DATA from 4GiB+10000", lseek(fd, four + 10000, SEEK_DATA));
    r.Ret("ftruncate 6GiB", ftruncate(fd, 6LL << 30));
    r.Ret("ftruncate 5GiB+200", ftruncate(fd, (5LL << 30) + 200));
    ReadAt(r, "after shrink", fd, (5LL << 30), 1000);
    r.Stat("stat", f);
    close(fd);
    // Leave a small file so the tree comparison does not read 5 GiB.
    r.Ret("truncate to 1 byte", truncate(f.c_str(), 1));
  });
}

TEST_F(PosixTest, ReaddirWithManyEntries) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string dir = d + "/many";
    mkdir(dir.c_str(), 0755);
    for (int i = 0; i < 3000; ++i) {
      std::string name = dir + "/entry_" + std::to_string(i) + std::string(i % 50, 'x');
      if (i % 100 == 0) {
        mkdir(name.c_str(), 0755);
      } else if (i % 100 == 1) {
        symlink("target", name.c_str());
      } else {
        close(open(name.c_str(), O_CREAT | O_WRONLY, 0644));
      }
    }
    auto list = [&](const std::string& what) {
      DIR* dp = opendir(dir.c_str());
      if (dp == nullptr) {
        r.Ret(what, -1);
        return;
      }
      std::set<std::string> names;
      size_t count = 0;
      while (dirent* e = readdir(dp)) {
        names.insert(std::string(e->d_name) + "/" + std::to_string(e->d_type));
        ++count;
      }
      closedir(dp);
      std::string all;
      for (const auto& n : names) all += n + "\n";
      r.Value(what + " count", std::to_string(count) + " unique " + std::to_string(names.size()));
      r.Value(what, all);
    };
    list("listing");
    for (int i = 0; i < 3000; i += 7) {
      std::string name = dir + "/entry_" + std::to_string(i) + std::string(i % 50, 'x');
      if (i % 100 == 0) {
        rmdir(name.c_str());
      } else {
        unlink(name.c_str());
      }
    }
    list("after removing every 7th");
    // Removing entries while a listing is open must not make it fail or repeat names.
    DIR* dp = opendir(dir.c_str());
    std::set<std::string> seen;
    bool repeated = false;
    int n = 0;
    while (dirent* e = readdir(dp)) {
      if (!seen.insert(e->d_name).second) repeated = true;
      if (++n == 100) {
        for (int i = 2; i < 3000; i += 13) {
          unlink((dir + "/entry_" + std::to_string(i) + std::string(i % 50, 'x')).c_str());
        }
      }
    }
    closedir(dp);
    r.Value("no name repeated while removing", repeated ? "repeated" : "ok");
  });
}

TEST_F(PosixTest, HardLinks) {
  Compare([](Recorder& r, const std::string& d) {
    WriteWholeFile(d + "/a", CompressibleBytes(20000, 5));
    r.Contents("a", d + "/a");
    r.Ret("link", link((d + "/a").c_str(), (d + "/b").c_str()));
    r.Stat("a nlink 2", d + "/a");
    r.Stat("b nlink 2", d + "/b");
    int fd = r.Fd("open b", open((d + "/b").c_str(), O_WRONLY));
    r.Ret("write through b", pwrite(fd, "LINKED", 6, 10000));
    close(fd);
    r.Contents("a sees b's write", d + "/a");
    r.Ret("link existing", link((d + "/a").c_str(), (d + "/b").c_str()));
    r.Ret("link missing", link((d + "/nope").c_str(), (d + "/c").c_str()));
    mkdir((d + "/dir").c_str(), 0755);
    r.Ret("link a directory", link((d + "/dir").c_str(), (d + "/dir2").c_str()));
    r.Ret("link into dir", link((d + "/a").c_str(), (d + "/dir/a3").c_str()));
    r.Stat("nlink 3", d + "/dir/a3");
    r.Ret("unlink a", unlink((d + "/a").c_str()));
    r.Stat("b nlink 2 after unlink", d + "/b");
    r.Contents("b still has the data", d + "/b");
    r.Ret("truncate via a3", truncate((d + "/dir/a3").c_str(), 5));
    r.Contents("b truncated", d + "/b");
  });
}

TEST_F(PosixTest, Utimens) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/t";
    WriteWholeFile(f, "times");
    auto times = [&](const std::string& what, const std::string& p, bool follow) {
      struct stat st;
      int rc = follow ? stat(p.c_str(), &st) : lstat(p.c_str(), &st);
      if (rc != 0) {
        r.Ret(what, rc);
        return;
      }
      r.Value(what, S(st.st_atim.tv_sec) + "." + S(st.st_atim.tv_nsec) + " " +
                        S(st.st_mtim.tv_sec) + "." + S(st.st_mtim.tv_nsec));
    };
    struct timespec ts[2] = {{1000000000, 123456789}, {1200000000, 987654321}};
    r.Ret("utimensat", utimensat(AT_FDCWD, f.c_str(), ts, 0));
    times("explicit", f, true);
    struct timespec omit[2] = {{0, UTIME_OMIT}, {1300000000, 5}};
    r.Ret("omit atime", utimensat(AT_FDCWD, f.c_str(), omit, 0));
    times("after omit", f, true);
    struct timespec old[2] = {{-1, 0}, {0, 0}};  // before the epoch, and the epoch
    r.Ret("pre-epoch", utimensat(AT_FDCWD, f.c_str(), old, 0));
    times("pre-epoch times", f, true);
    struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
    r.Ret("bad nsec", utimensat(AT_FDCWD, f.c_str(), bad, 0));
    int fd = open(f.c_str(), O_RDONLY);
    r.Ret("futimens", futimens(fd, ts));
    close(fd);
    times("futimens", f, true);
    symlink("t", (d + "/l").c_str());
    struct timespec ls[2] = {{1100000000, 1}, {1100000000, 2}};
    r.Ret("nofollow on symlink", utimensat(AT_FDCWD, (d + "/l").c_str(), ls,
                                           AT_SYMLINK_NOFOLLOW));
    times("link times", d + "/l", false);
    times("target untouched", f, true);
    r.Ret("missing", utimensat(AT_FDCWD, (d + "/nope").c_str(), ts, 0));
    // UTIME_NOW: only that it succeeds and moves mtime forward from 2005.
    r.Ret("now", utimensat(AT_FDCWD, f.c_str(), nullptr, 0));
    struct stat st;
    stat(f.c_str(), &st);
    r.Value("now is recent", st.st_mtim.tv_sec > 1600000000 ? "yes" : "no");
  });
}

TEST_F(PosixTest, Fallocate) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string f = d + "/fa";
    WriteWholeFile(f, CompressibleBytes(65536, 13));
    int fd = r.Fd("open", open(f.c_str(), O_RDWR));
    ReadAt(r, "cache it", fd, 0, 65536);
    r.Ret("extend", fallocate(fd, 0, 0, 100000));
    r.Stat("size extended", f);
    r.Ret("keep size", fallocate(fd, FALLOC_FL_KEEP_SIZE, 100000, 50000));
    r.Stat("size kept", f);
    r.Ret("punch hole", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 8192, 16384));
    ReadAt(r, "punched range reads zeros", fd, 0, 65536);
    r.Ret("zero range", fallocate(fd, FALLOC_FL_ZERO_RANGE, 30000, 5000));
    ReadAt(r, "zeroed range", fd, 28000, 10000);
    // COLLAPSE_RANGE and INSERT_RANGE: the kernel's FUSE client refuses them (EOPNOTSUPP) before
    // the daemon sees them; FallocateModesFuseDoesNotPass checks that this is clean.
    r.Ret("punch without keep size", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10));
    r.Ret("bad length", fallocate(fd, 0, 0, 0));
    ReadAt(r, "cache the last page", fd, 140000, 20000);
    r.Value("posix_fallocate", S(posix_fallocate(fd, 200000, 10000)));
    ReadAt(r, "reads go past the old end", fd, 140000, 80000);
    r.Stat("final size", f);
    close(fd);
    int ro = open(f.c_str(), O_RDONLY);
    r.Ret("on read-only fd", fallocate(ro, 0, 0, 10));
    close(ro);
  });
}

// Modes the kernel's FUSE client does not pass on: refused with EOPNOTSUPP, nothing changed.
TEST_F(PosixTest, FallocateModesFuseDoesNotPass) {
  std::string bytes = CompressibleBytes(65536, 17);
  WriteWholeFile(ds_.MntPath("fa"), bytes);
  int fd = open(ds_.MntPath("fa").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  for (int mode : {FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE}) {
    errno = 0;
    EXPECT_EQ(fallocate(fd, mode, 4096, 4096), -1);
    EXPECT_EQ(errno, EOPNOTSUPP);
  }
  close(fd);
  EXPECT_TRUE(ReadWholeFile(ds_.MntPath("fa")) == bytes);
  EXPECT_TRUE(ReadWholeFile(ds_.DataPath("fa")) == bytes);
}

}  // namespace
}  // namespace ccfs::testing
