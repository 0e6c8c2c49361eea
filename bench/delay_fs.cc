// delay_fs: an EMULATED backing store. A pass-through FUSE file system over a source directory
// that waits a configurable time before every read, and can cap the rate its reads stream at, so
// that ccfs (or the page cache) can be put in front of a "store" whose page reads cost any latency
// between a local disk's and a file server's, and whose streams run at a network's or a cloud
// volume's rate rather than the local disk's. Every table that shows a delay_fs figure must say it is an emulation: the wait is a
// timer, not a network or a remote disk, and the CPU cost a real client pays per request (ssh
// ciphers, GlusterFS translators) is not here.
//
//   delay_fs SOURCE MOUNTPOINT [--delay-us N] [--mib-per-s R] [--wait hybrid|sleep|spin]
//            [--spin-us N] [--page-cache] [-o FUSE_OPTIONS]
//   delay_fs --measure-wait            how close each --wait comes to 50..2000 µs on this machine
//
// A read here costs: the FUSE round trip + N µs + an O_DIRECT pread of the source, and with
// --mib-per-s R, the time its bytes take to cross one link of R MiB/s that every read shares (a
// read's bytes are queued behind the bytes of reads before it: 4 readers of a 100 MiB/s store get
// 100 MiB/s between them, as on one network link). So that the store is the one answering:
//   - the source is read with O_DIRECT (through an aligned bounce buffer: FUSE passes the caller's
//     offset and size, which need not be aligned), so the local page cache does not answer;
//   - every file is opened with direct_io, so the kernel does not cache delay_fs's own pages above
//     it (and does no readahead: one read(2) of 8 KiB is one FUSE read of 8 KiB, one wait).
//     --page-cache lifts this one, for a page cache baseline that sits on the same store.
// Writes go through an ordinary descriptor (the kernel flushes a written range before an O_DIRECT
// read of it, so a read after a write sees the write) and are not delayed: the emulation is of
// read latency, which is what a cache in front of a store hides.
//
// It serves in the foreground until unmounted (fusermount3 -u MOUNTPOINT) or signalled. Requests
// are served by several threads, so concurrent reads wait concurrently, as on a store that takes
// more than one request at a time. scripts/stores.sh (`up delay`) starts and stops it.
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)
#include <dirent.h>
#include <fcntl.h>
#include <fuse3/fuse.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// O_DIRECT needs buffer, offset and length aligned to the source's logical block size; 4 KiB
// covers every device this runs on (512-byte and 4 KiB sectors).
constexpr size_t kDirectAlign = 4096;

enum class WaitKind { kSleep, kSpin, kHybrid };

// Filled in by main before the request loop starts and only read afterwards, so the loop's
// threads share it without a lock.
struct Settings {
  int source_fd = -1;  // the source directory; every path below is resolved relative to it
  int64_t delay_ns = 0;
  WaitKind wait = WaitKind::kHybrid;
  int64_t spin_ns = 100000;  // kHybrid: the last part of each wait that is spun, not slept
  bool page_cache = false;   // --page-cache: let the kernel cache delay_fs's files (see main)
  int64_t bytes_per_s = 0;   // --mib-per-s: the link's rate; 0 = no cap
  int getattr_count_fd = -1;  // --count-getattrs: the file the count is written to; -1 = none
};
Settings g;

// --count-getattrs: the attribute requests delay_fs has answered, for a test to see which of a
// client's stats reached the store.
std::atomic<uint64_t> g_getattrs{0};

// The link (--mib-per-s): the CLOCK_MONOTONIC time in ns at which the bytes of every read so far
// have crossed it. A read reserves its slot by moving it on, from now or from the end of the
// reads before it, whichever is later.
std::atomic<int64_t> g_link_free_at{0};

// One open file: `fd` with the caller's flags (less O_DIRECT) for writes and metadata, and
// `direct_fd`, O_RDONLY|O_DIRECT, for reads (-1 when the file was opened write-only).
struct OpenFile {
  int fd = -1;
  int direct_fd = -1;
};

OpenFile* Handle(fuse_file_info* fi) { return reinterpret_cast<OpenFile*>(fi->fh); }

// FUSE gives absolute paths ("/a/b"); the *at() calls take them relative to the source.
const char* Rel(const char* path) { return path[1] == '\0' ? "." : path + 1; }

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void SleepUntil(int64_t deadline) {
  timespec ts{static_cast<time_t>(deadline / 1000000000LL),
              static_cast<long>(deadline % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// Waits `ns` nanoseconds. Why three kinds (`delay_fs --measure-wait` prints the figures): on a
// VM a clock_nanosleep wakes 20-50 µs late even with 1 ns timer slack (set in Init, else the
// kernel adds its default 50 µs), which is 40% at 50 µs; spinning is exact but burns a CPU for the
// whole wait, which on a 2-core machine slows the cache under test. kHybrid sleeps to
// `spin_ns` before the deadline and spins the rest: exact in the median, at most spin_ns of CPU.
void Wait(int64_t ns) {
  if (ns <= 0) return;
  const int64_t deadline = NowNs() + ns;
  if (g.wait == WaitKind::kSleep) {
    SleepUntil(deadline);
    return;
  }
  if (g.wait == WaitKind::kHybrid && ns > g.spin_ns) SleepUntil(deadline - g.spin_ns);
  while (NowNs() < deadline) {
  }
}

// libfuse starts its worker threads after Init; timer slack is per thread and inherited, so it
// is set here (the loop thread) and in each read (cheap: one prctl) to be sure.
void SetTimerSlack() { prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); }

// --mib-per-s: reserves the link for `bytes` and waits until they have crossed it.
void CrossLink(size_t bytes) {
  if (g.bytes_per_s <= 0 || bytes == 0) return;
  const int64_t transfer =
      static_cast<int64_t>(static_cast<double>(bytes) * 1e9 / static_cast<double>(g.bytes_per_s));
  const int64_t now = NowNs();
  int64_t free_at = g_link_free_at.load(std::memory_order_relaxed);
  int64_t done;
  do {
    done = std::max(free_at, now) + transfer;
  } while (!g_link_free_at.compare_exchange_weak(free_at, done, std::memory_order_relaxed));
  Wait(done - NowNs());
}

void* Init(fuse_conn_info* conn, fuse_config* cfg) {
  cfg->use_ino = 1;
  // Default: no kernel page cache above the store, no kernel readahead. --page-cache: the kernel
  // keeps a file's pages across opens while its mtime and size are unchanged.
  cfg->direct_io = g.page_cache ? 0 : 1;
  cfg->auto_cache = g.page_cache ? 1 : 0;
  cfg->kernel_cache = 0;
  cfg->nullpath_ok = 1;  // reads and writes on an open file need only its handle
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  SetTimerSlack();
  return nullptr;
}

int Getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  if (g.getattr_count_fd >= 0) {
    // The count in decimal, padded and overwritten in place: a reader sees one whole number. A
    // failed write leaves the count short for the test reading it; nothing else depends on it.
    std::string n = std::to_string(g_getattrs.fetch_add(1) + 1);
    n.resize(20, ' ');
    n += '\n';
    [[maybe_unused]] const ssize_t written = pwrite(g.getattr_count_fd, n.data(), n.size(), 0);
  }
  int rc = fi != nullptr ? fstat(Handle(fi)->fd, st)
                         : fstatat(g.source_fd, Rel(path), st, AT_SYMLINK_NOFOLLOW);
  return rc == 0 ? 0 : -errno;
}

int Readlink(const char* path, char* buf, size_t size) {
  ssize_t n = readlinkat(g.source_fd, Rel(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

int Mkdir(const char* path, mode_t mode) {
  return mkdirat(g.source_fd, Rel(path), mode) == 0 ? 0 : -errno;
}

int Unlink(const char* path) { return unlinkat(g.source_fd, Rel(path), 0) == 0 ? 0 : -errno; }

int Rmdir(const char* path) {
  return unlinkat(g.source_fd, Rel(path), AT_REMOVEDIR) == 0 ? 0 : -errno;
}

int Symlink(const char* target, const char* path) {
  return symlinkat(target, g.source_fd, Rel(path)) == 0 ? 0 : -errno;
}

int Rename(const char* from, const char* to, unsigned int flags) {
  return renameat2(g.source_fd, Rel(from), g.source_fd, Rel(to), flags) == 0 ? 0 : -errno;
}

int Link(const char* from, const char* to) {
  return linkat(g.source_fd, Rel(from), g.source_fd, Rel(to), 0) == 0 ? 0 : -errno;
}

int Chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  int rc = fi != nullptr ? fchmod(Handle(fi)->fd, mode) : fchmodat(g.source_fd, Rel(path), mode, 0);
  return rc == 0 ? 0 : -errno;
}

int Chown(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
  int rc = fi != nullptr ? fchown(Handle(fi)->fd, uid, gid)
                         : fchownat(g.source_fd, Rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
  return rc == 0 ? 0 : -errno;
}

int Truncate(const char* path, off_t size, fuse_file_info* fi) {
  if (fi != nullptr) return ftruncate(Handle(fi)->fd, size) == 0 ? 0 : -errno;
  int fd = openat(g.source_fd, Rel(path), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = ftruncate(fd, size) == 0 ? 0 : -errno;
  close(fd);
  return rc;
}

int Utimens(const char* path, const timespec tv[2], fuse_file_info* fi) {
  int rc = fi != nullptr ? futimens(Handle(fi)->fd, tv)
                         : utimensat(g.source_fd, Rel(path), tv, AT_SYMLINK_NOFOLLOW);
  return rc == 0 ? 0 : -errno;
}

// Opens both descriptors of an OpenFile (see above). `create` adds O_CREAT with `mode`.
int OpenBoth(const char* path, fuse_file_info* fi, bool create, mode_t mode) {
  int flags = (fi->flags & ~O_DIRECT) | O_CLOEXEC;
  if (create) flags |= O_CREAT;
  auto* of = new OpenFile;
  of->fd = openat(g.source_fd, Rel(path), flags, mode);
  if (of->fd < 0) {
    int err = errno;
    delete of;
    return -err;
  }
  if ((fi->flags & O_ACCMODE) != O_WRONLY) {
    of->direct_fd = openat(g.source_fd, Rel(path), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (of->direct_fd < 0) {
      int err = errno;
      if (err == EINVAL) {
        fprintf(stderr, "delay_fs: %s: the source file system does not support O_DIRECT\n", path);
      }
      close(of->fd);
      delete of;
      return -err;
    }
  }
  fi->fh = reinterpret_cast<uint64_t>(of);
  fi->direct_io = g.page_cache ? 0 : 1;
  return 0;
}

int Open(const char* path, fuse_file_info* fi) { return OpenBoth(path, fi, false, 0); }

int Create(const char* path, mode_t mode, fuse_file_info* fi) {
  return OpenBoth(path, fi, true, mode);
}

// The emulated store: wait, then read the source with O_DIRECT through an aligned buffer that
// covers [off, off + size) rounded out to kDirectAlign.
int Read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
  OpenFile* of = Handle(fi);
  if (of->direct_fd < 0) return -EBADF;
  SetTimerSlack();
  Wait(g.delay_ns);
  const off_t start = off & ~static_cast<off_t>(kDirectAlign - 1);
  const size_t span = (static_cast<size_t>(off - start) + size + kDirectAlign - 1) &
                      ~(kDirectAlign - 1);
  void* bounce = nullptr;
  if (posix_memalign(&bounce, kDirectAlign, span) != 0) return -ENOMEM;
  size_t got = 0;
  int err = 0;
  while (got < span) {
    ssize_t n = pread(of->direct_fd, static_cast<char*>(bounce) + got, span - got, start + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got % kDirectAlign != 0) break;  // a short read ends at end of file
  }
  int rc;
  if (err != 0) {
    rc = -err;
  } else {
    const size_t head = static_cast<size_t>(off - start);
    const size_t n = got > head ? std::min(size, got - head) : 0;
    memcpy(buf, static_cast<char*>(bounce) + head, n);
    rc = static_cast<int>(n);
    CrossLink(n);
  }
  free(bounce);
  return rc;
}

int Write(const char*, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  ssize_t n = pwrite(Handle(fi)->fd, buf, size, off);
  return n < 0 ? -errno : static_cast<int>(n);
}

int Statfs(const char*, struct statvfs* st) {
  return fstatvfs(g.source_fd, st) == 0 ? 0 : -errno;
}

int Flush(const char*, fuse_file_info* fi) {
  // close(dup()) reports the errors close(2) would, as on the source itself.
  int fd = dup(Handle(fi)->fd);
  if (fd < 0) return -errno;
  return close(fd) == 0 ? 0 : -errno;
}

int Release(const char*, fuse_file_info* fi) {
  OpenFile* of = Handle(fi);
  close(of->fd);
  if (of->direct_fd >= 0) close(of->direct_fd);
  delete of;
  return 0;
}

int Fsync(const char*, int datasync, fuse_file_info* fi) {
  int fd = Handle(fi)->fd;
  return (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : -errno;
}

// Directories are listed whole in one call (offset 0 to the filler): the data sets here have a
// few thousand entries per directory at most. With nullpath_ok, readdir gets no path: opendir keeps
// a descriptor of the source directory in fi->fh, and each readdir lists a duplicate of it from
// the start (fdopendir takes the duplicate; it shares the offset, hence the rewinddir).
int Opendir(const char* path, fuse_file_info* fi) {
  int fd = openat(g.source_fd, Rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}

int Readdir(const char*, void* buf, fuse_fill_dir_t filler, off_t, fuse_file_info* fi,
            fuse_readdir_flags) {
  int fd = fcntl(static_cast<int>(fi->fh), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return -errno;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    close(fd);
    return -err;
  }
  rewinddir(dir);
  while (dirent* de = readdir(dir)) {
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_ino = de->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(de->d_type));
    if (filler(buf, de->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0)) != 0) break;
  }
  closedir(dir);
  return 0;
}

int Releasedir(const char*, fuse_file_info* fi) {
  close(static_cast<int>(fi->fh));
  return 0;
}

int Access(const char* path, int mask) {
  return faccessat(g.source_fd, Rel(path), mask, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

int Fallocate(const char*, int mode, off_t off, off_t len, fuse_file_info* fi) {
  return fallocate(Handle(fi)->fd, mode, off, len) == 0 ? 0 : -errno;
}

const char* WaitName(WaitKind kind) {
  switch (kind) {
    case WaitKind::kSleep:
      return "sleep";
    case WaitKind::kSpin:
      return "spin";
    case WaitKind::kHybrid:
      break;
  }
  return "hybrid";
}

// --measure-wait: for each target, the median and p99 of what each wait kind actually waited
// (200 waits each), so the choice of --wait is a measurement on this machine, not a guess.
int MeasureWait() {
  SetTimerSlack();
  const int kTargetsUs[] = {50, 100, 200, 500, 1000, 2000};
  constexpr int kRounds = 200;
  printf("%-6s %10s %12s %12s %12s %12s\n", "wait", "target_us", "median_us", "p99_us",
         "median_err%", "cpu_ms");
  for (WaitKind kind : {WaitKind::kSleep, WaitKind::kSpin, WaitKind::kHybrid}) {
    g.wait = kind;
    for (int target : kTargetsUs) {
      std::vector<double> us;
      timespec cpu0, cpu1;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
      for (int i = 0; i < kRounds; ++i) {
        int64_t t0 = NowNs();
        Wait(target * 1000LL);
        us.push_back((NowNs() - t0) / 1000.0);
      }
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
      std::sort(us.begin(), us.end());
      double median = us[us.size() / 2], p99 = us[us.size() * 99 / 100];
      double cpu_ms = (cpu1.tv_sec - cpu0.tv_sec) * 1e3 + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e6;
      printf("%-6s %10d %12.1f %12.1f %12.1f %12.1f\n",
             WaitName(kind), target, median, p99,
             100.0 * (median - target) / target, cpu_ms);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "delay_fs: an EMULATED backing store. Passes a source directory through FUSE and waits\n"
      "--delay-us before every read (reads of the source use O_DIRECT; files are direct_io, so\n"
      "neither page cache answers). Figures measured over it are an emulation of a store's\n"
      "latency, not a real store."};
  std::string source, mountpoint, wait_name = "hybrid", fuse_opts;
  int64_t delay_us = 0, spin_us = 100;
  double mib_per_s = 0;
  bool measure = false;
  app.add_option("source", source, "directory whose files are served");
  app.add_option("mountpoint", mountpoint, "where to mount");
  app.add_option("--delay-us", delay_us, "wait before each read, µs (default 0)")
      ->check(CLI::Range(int64_t{0}, int64_t{10000000}));
  app.add_option("--mib-per-s", mib_per_s,
                 "cap the rate reads stream at, MiB/s, shared by all reads (default 0: no cap)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--wait", wait_name,
                 "hybrid (default: sleep, then spin the last --spin-us) | sleep | spin")
      ->check(CLI::IsMember({"hybrid", "sleep", "spin"}));
  app.add_option("--spin-us", spin_us, "hybrid: how much of each wait is spun, µs (default 100)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  app.add_flag("--page-cache", g.page_cache,
               "let the kernel cache the files (a page cache baseline on this store); reads that "
               "reach delay_fs still wait");
  app.add_option("-o", fuse_opts, "extra FUSE mount options, comma-separated");
  std::string count_getattrs;
  app.add_option("--count-getattrs", count_getattrs,
                 "write the number of attribute requests answered so far to this file (tests)");
  app.add_flag("--measure-wait", measure, "print how accurate each --wait is at 50..2000 µs");
  CLI11_PARSE(app, argc, argv);
  g.wait = wait_name == "spin"    ? WaitKind::kSpin
           : wait_name == "sleep" ? WaitKind::kSleep
                                  : WaitKind::kHybrid;
  g.spin_ns = spin_us * 1000;
  if (measure) return MeasureWait();
  if (source.empty() || mountpoint.empty()) {
    fprintf(stderr, "delay_fs: SOURCE and MOUNTPOINT are required (see --help)\n");
    return 1;
  }
  g.delay_ns = delay_us * 1000;
  if (!count_getattrs.empty()) {
    g.getattr_count_fd =
        open(count_getattrs.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (g.getattr_count_fd < 0) {
      fprintf(stderr, "delay_fs: --count-getattrs %s: %s\n", count_getattrs.c_str(),
              strerror(errno));
      return 1;
    }
  }
  g.bytes_per_s = static_cast<int64_t>(mib_per_s * 1048576.0);
  g.source_fd = open(source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (g.source_fd < 0) {
    fprintf(stderr, "delay_fs: source %s: %s\n", source.c_str(), strerror(errno));
    return 1;
  }

  fuse_operations ops{};
  ops.init = Init;
  ops.getattr = Getattr;
  ops.readlink = Readlink;
  ops.mkdir = Mkdir;
  ops.unlink = Unlink;
  ops.rmdir = Rmdir;
  ops.symlink = Symlink;
  ops.rename = Rename;
  ops.link = Link;
  ops.chmod = Chmod;
  ops.chown = Chown;
  ops.truncate = Truncate;
  ops.utimens = Utimens;
  ops.open = Open;
  ops.create = Create;
  ops.read = Read;
  ops.write = Write;
  ops.statfs = Statfs;
  ops.flush = Flush;
  ops.release = Release;
  ops.fsync = Fsync;
  ops.opendir = Opendir;
  ops.readdir = Readdir;
  ops.releasedir = Releasedir;
  ops.access = Access;
  ops.fallocate = Fallocate;

  std::string opts = "fsname=delay_fs,subtype=delay_fs";
  if (!fuse_opts.empty()) opts += "," + fuse_opts;
  fuse_args args = FUSE_ARGS_INIT(0, nullptr);
  fuse* fs = nullptr;
  if (fuse_opt_add_arg(&args, "delay_fs") == 0 && fuse_opt_add_arg(&args, "-o") == 0 &&
      fuse_opt_add_arg(&args, opts.c_str()) == 0) {
    fs = fuse_new(&args, &ops, sizeof(ops), nullptr);
  }
  fuse_opt_free_args(&args);
  if (fs == nullptr) {
    fprintf(stderr, "delay_fs: fuse_new failed (bad -o %s?)\n", fuse_opts.c_str());
    return 1;
  }
  if (fuse_mount(fs, mountpoint.c_str()) != 0) {
    fprintf(stderr, "delay_fs: cannot mount on %s\n", mountpoint.c_str());
    fuse_destroy(fs);
    return 1;
  }
  fuse_set_signal_handlers(fuse_get_session(fs));
  fprintf(stderr,
          "delay_fs: EMULATED store: %s at %s, +%lld us (%s) before each read, %s, O_DIRECT source "
          "reads, %s\n",
          source.c_str(), mountpoint.c_str(), static_cast<long long>(delay_us), wait_name.c_str(),
          mib_per_s > 0 ? ("streams capped at " + std::to_string(mib_per_s) + " MiB/s").c_str()
                        : "no rate cap",
          g.page_cache ? "kernel page cache allowed (--page-cache)" : "direct_io files");
  fuse_loop_config* loop = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(loop, 16);
  int rc = fuse_loop_mt(fs, loop);
  fuse_loop_cfg_destroy(loop);
  fuse_remove_signal_handlers(fuse_get_session(fs));
  fuse_unmount(fs);
  fuse_destroy(fs);
  close(g.source_fd);
  return rc == 0 ? 0 : 1;
}
