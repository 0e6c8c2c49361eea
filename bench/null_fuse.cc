// null_fuse: the FUSE floor. A minimal low-level FUSE file system with one file, "data", whose
// reads are answered from a static buffer (direct_io, so every read reaches the daemon). Nothing
// is cached or copied beyond what libfuse itself does, so the time a reader sees for an 8 KiB
// pread here is the least any FUSE daemon on this machine can cost. bench/fuse_rtt.cc mounts it
// beside ccfs and compares.
//
//   null_fuse MOUNTPOINT [--loop fixed|single|mt] [--threads N] [--clone-fd] [--size BYTES]
//             [--uring] [--backing FILE]
//
// --uring serves requests from FUSE over io_uring queues (src/fuse/uring_transport.h), with the
// --loop threads on /dev/fuse for what stays there.
//
// --backing FILE makes it the floor of a FUSE cache in raw_tier = kernel on a cold miss instead:
// "data" is FILE (its size), opened with keep_cache and no direct_io, as ccfs opens data files in
// that mode, so the kernel's page cache holds what was read and only its misses come here; each
// READ is one O_DIRECT pread of FILE (the range widened to 4 KiB alignment) into an aligned buffer,
// and nothing is kept. No FUSE daemon that reads its store on the kernel's misses can cost less
// per miss; a reader's speed through it against the page cache on FILE, at equal RAM, bounds what
// any such cache can reach where compression buys no hits.
//
// Serves in the foreground until unmounted (fusermount3 -u MOUNTPOINT).
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuse/request_loop.h"
#include "fuse/session_io.h"
#include "fuse/uring_transport.h"

namespace {

constexpr fuse_ino_t kDataIno = 2;
constexpr char kDataName[] = "data";
constexpr size_t kMaxRead = 1 << 20;

uint64_t g_size = 64ull << 20;
// Every read returns bytes from here (the content is a repeating byte pattern).
std::vector<char> g_pattern;
// --backing: FILE opened O_DIRECT (-1: none).
int g_backing = -1;
constexpr uint64_t kAlign = 4096;

void FillAttr(fuse_ino_t ino, struct stat* st) {
  memset(st, 0, sizeof(*st));
  st->st_ino = ino;
  if (ino == FUSE_ROOT_ID) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  } else {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(g_size);
  }
}

void NullInit(void*, fuse_conn_info* conn) {
  conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE |
                  FUSE_CAP_WRITEBACK_CACHE);
}

void NullLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (parent != FUSE_ROOT_ID || strcmp(name, kDataName) != 0) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fuse_entry_param e;
  memset(&e, 0, sizeof(e));
  e.ino = kDataIno;
  e.attr_timeout = 3600;
  e.entry_timeout = 3600;
  FillAttr(kDataIno, &e.attr);
  fuse_reply_entry(req, &e);
}

void NullGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  struct stat st;
  FillAttr(ino, &st);
  fuse_reply_attr(req, &st, 3600);
}

void NullOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino != kDataIno) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  fi->direct_io = g_backing < 0 ? 1 : 0;
  fi->keep_cache = g_backing < 0 ? 0 : 1;
  fuse_reply_open(req, fi);
}

// --backing: one O_DIRECT pread of the aligned range around [off, off + n) per READ.
void BackingRead(fuse_req_t req, uint64_t off, size_t n) {
  thread_local void* buf = nullptr;
  if (buf == nullptr && posix_memalign(&buf, kAlign, kMaxRead + 2 * kAlign) != 0) buf = nullptr;
  if (buf == nullptr) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  const uint64_t start = off / kAlign * kAlign;
  const uint64_t end = (off + n + kAlign - 1) / kAlign * kAlign;
  const ssize_t got = pread(g_backing, buf, end - start, static_cast<off_t>(start));
  if (got < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  const uint64_t skip = off - start;
  const size_t have = static_cast<uint64_t>(got) > skip ? static_cast<size_t>(got - skip) : 0;
  fuse_reply_buf(req, static_cast<char*>(buf) + skip, std::min(n, have));
}

void NullRead(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info*) {
  uint64_t o = static_cast<uint64_t>(off);
  size_t n = o >= g_size ? 0 : std::min<uint64_t>(size, g_size - o);
  n = std::min(n, kMaxRead);
  if (g_backing >= 0) {
    BackingRead(req, o, n);
    return;
  }
  fuse_reply_buf(req, g_pattern.data(), n);
}

void NullReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  char buf[512];
  size_t used = 0;
  struct stat st;
  const char* names[] = {".", "..", kDataName};
  for (off_t i = off; i < 3; ++i) {
    FillAttr(i == 2 ? kDataIno : FUSE_ROOT_ID, &st);
    size_t need = fuse_add_direntry(req, buf + used, sizeof(buf) - used, names[i], &st, i + 1);
    if (need > sizeof(buf) - used || used + need > size) break;
    used += need;
  }
  fuse_reply_buf(req, buf, used);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"null_fuse: the FUSE floor (one file answered from a static buffer)"};
  std::string mountpoint, loop_name = "fixed";
  int threads = 1;
  bool clone_fd = false, uring = false;
  app.add_option("mountpoint", mountpoint)->required();
  app.add_flag("--uring", uring, "serve from FUSE over io_uring queues");
  app.add_option("--loop", loop_name, "fixed | single | mt");
  app.add_option("--threads", threads, "serving threads (fixed, mt)");
  app.add_flag("--clone-fd", clone_fd, "mt: one /dev/fuse fd per thread");
  app.add_option("--size", g_size, "size of the data file, bytes");
  std::string backing;
  app.add_option("--backing", backing,
                 "serve FILE's bytes, kept by the kernel, each READ one O_DIRECT pread");
  CLI11_PARSE(app, argc, argv);
  if (!backing.empty()) {
    g_backing = open(backing.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    struct stat st;
    if (g_backing < 0 || fstat(g_backing, &st) != 0) {
      fprintf(stderr, "null_fuse: --backing %s: %s\n", backing.c_str(), strerror(errno));
      return 1;
    }
    g_size = static_cast<uint64_t>(st.st_size);
  }

  ccfs::RequestLoopConfig loop_config;
  if (!ccfs::ParseRequestLoopKind(loop_name, &loop_config.kind)) {
    fprintf(stderr, "null_fuse: --loop %s: must be fixed, single or mt\n", loop_name.c_str());
    return 1;
  }
  loop_config.threads = threads;
  loop_config.clone_fd = clone_fd;
  g_pattern.resize(kMaxRead);
  for (size_t i = 0; i < g_pattern.size(); ++i) g_pattern[i] = static_cast<char>('a' + i % 26);

  fuse_lowlevel_ops ops;
  memset(&ops, 0, sizeof(ops));
  ops.init = NullInit;
  ops.lookup = NullLookup;
  ops.getattr = NullGetattr;
  ops.open = NullOpen;
  ops.read = NullRead;
  ops.readdir = NullReaddir;

  std::vector<std::string> args_s = {"null_fuse", "-o", "fsname=null_fuse,subtype=null_fuse"};
  std::vector<char*> args_v;
  for (auto& a : args_s) args_v.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(args_v.size()), args_v.data());
  fuse_session* se = fuse_session_new(&args, &ops, sizeof(ops), nullptr);
  if (se == nullptr) {
    fprintf(stderr, "null_fuse: fuse_session_new failed\n");
    return 1;
  }
  if (fuse_session_mount(se, mountpoint.c_str()) != 0) {
    fprintf(stderr, "null_fuse: cannot mount on %s\n", mountpoint.c_str());
    fuse_session_destroy(se);
    return 1;
  }
  if (uring) {
    ccfs::Status s = ccfs::UringAvailable();
    if (s.ok()) s = ccfs::InstallSessionIo(se, ccfs::kInitOverIoUring);
    if (!s.ok()) {
      fprintf(stderr, "null_fuse: %s\n", s.ToString().c_str());
      fuse_session_unmount(se);
      fuse_session_destroy(se);
      return 1;
    }
  }
  int rc = 0;
  {
    ccfs::RequestLoop loop(se, loop_config);
    std::unique_ptr<ccfs::UringTransport> transport;
    ccfs::Status s = loop.Start();
    if (s.ok() && uring) {
      ccfs::InitResult init;
      if (!ccfs::WaitForInit(10000, &init) || (init.added & ccfs::kInitOverIoUring) == 0) {
        s = ccfs::Status::NotSupported("the kernel did not agree to FUSE over io_uring in INIT");
      } else {
        ccfs::UringTransportConfig config;
        config.max_write = init.max_write;
        config.max_pages = init.max_pages;
        transport = std::make_unique<ccfs::UringTransport>(se, config);
        s = transport->Start();
      }
      if (!s.ok()) loop.Stop();
    }
    if (!s.ok()) {
      fprintf(stderr, "null_fuse: %s\n", s.ToString().c_str());
      rc = 1;
    } else {
      loop.Join();
      if (transport != nullptr) transport->Stop();
      if (!loop.result().ok()) {
        fprintf(stderr, "null_fuse: %s\n", loop.result().ToString().c_str());
        rc = 1;
      }
    }
  }
  fuse_session_unmount(se);
  fuse_session_destroy(se);
  return rc;
}
