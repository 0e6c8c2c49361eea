// The POSIX backing store: page reads through a second, O_DIRECT descriptor (opened at the first
// page read), one preadv per run of pages; writes, size and sync through the descriptor the file
// was opened with.
//
// Why two descriptors: O_DIRECT is what makes a miss a real device read (the kernel's page cache
// would otherwise answer repeats and the daemon's hit ratio would be measured against a second,
// invisible cache). But O_DIRECT constrains every I/O to be block aligned, and writes arrive at
// any offset and length, so writes keep the ordinary descriptor. The kernel keeps the two
// coherent: a direct read first writes back dirty cached pages of the range it reads. A file
// opened read-only may come with an O_DIRECT descriptor already (NewPosixBackingFile): that one
// serves the page reads, and an ordinary one is opened only if a read must be buffered (a short
// read that is not the end of the file, or a store that refuses direct reads). Over a network
// store each open and close is a trip to its server, so a small file read once then costs one
// open, not two.
//
// Why the fallback is decided per file: whether O_DIRECT works is a property of the file system
// (tmpfs before 6.6, procfs, many FUSE and network file systems refuse it). Since Linux 6.x the
// refusal comes at open() as EINVAL; older kernels and some file systems accept the open and fail
// the first read with EINVAL. Both are caught; the file then reads buffered and direct() says so,
// because such misses are not device reads and reports must not pretend they are.
//
// Why ENOTCONN becomes EIO: a FUSE or network file system under the dataset (an sshfs mount whose
// process died, a GlusterFS client cut off from its bricks) answers ENOTCONN (ECONNABORTED for a
// request in flight when a FUSE connection went, ECANCELED when that connection was served over
// io_uring). Handed up unchanged, ccfs's own readers would
// see "Transport endpoint is not connected", which on a FUSE mount says that ccfs is gone; ccfs
// is up and the store failed an I/O: EIO, the message keeping the cause.
//
// This file and mem_backing_store.cc are the only places where errno becomes a Status.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <mutex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "ccfs/backing_store.h"
#include "ccfs/status.h"

namespace ccfs {
namespace {

bool IsAligned(uint64_t v) { return v % kIoAlignment == 0; }

// The size of the file `fd` names (0, or -1 with errno set). statx asks for the size alone: a
// FUSE store (sshfs, a GlusterFS client) marks a file's cached atime stale after every read, and
// fstat, which asks for the atime too, then costs a GETATTR round trip to the store's server,
// paid at the end of nearly every file a miss reads whole (its short read asks the size). The
// size is as fresh as the store's own attribute cache, as the change check's signature is.
int SizeOf(int fd, uint64_t* size) {
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_SIZE, &stx) != 0) return -1;
  *size = stx.stx_size;
  return 0;
}

// The Status of a failed read or write of the store's data (ENOTCONN: EIO, see above).
Status DataError(int err, const std::string& what) {
  if (err == ENOTCONN || err == ECONNABORTED || err == ECANCELED) {
    const char* name =
        err == ENOTCONN ? "ENOTCONN" : (err == ECONNABORTED ? "ECONNABORTED" : "ECANCELED");
    return Status::FromErrno(EIO, what + " (the store is not connected: " + name + ")");
  }
  return Status::FromErrno(err, what);
}

class PosixBackingFile final : public BackingFile {
 public:
  // Takes ownership of `fd`. `open_direct` opens the O_DIRECT descriptor (-1 when the file system
  // refuses O_DIRECT); it runs at the first page read, so a file opened and read from the cache
  // alone costs the store one open, not two (over sshfs or GlusterFS each open and close is a
  // round trip to the server). Empty: no direct descriptor (a write-only file).
  PosixBackingFile(int fd, std::function<int()> open_direct, std::string name,
                   const BackingFileOptions& options = {})
      : fd_(fd), open_direct_(std::move(open_direct)), name_(std::move(name)), options_(options),
        use_direct_(static_cast<bool>(open_direct_)) {}
  // `fd` is itself an O_DIRECT descriptor opened for reading: it serves the page reads, and
  // `open_buffered` opens an ordinary one for reading the first time a read must be buffered.
  struct DirectDescriptor {};
  PosixBackingFile(DirectDescriptor, int fd, std::function<int()> open_buffered, std::string name,
                   const BackingFileOptions& options)
      : fd_(fd), open_buffered_(std::move(open_buffered)), name_(std::move(name)),
        options_(options), use_direct_(true), fd_is_direct_(true) {}

  // "fd N (path)" for a file made from a descriptor, resolved now: fd_ stays open while the file
  // lives, so /proc names the file it reads (where it is now, if it was renamed).
  std::string Name() const {
    if (!name_.empty()) return name_;
    std::string name = "fd " + std::to_string(fd_);
    char target[4096];
    const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    const ssize_t n = readlink(proc.c_str(), target, sizeof(target) - 1);
    if (n > 0) name += " (" + std::string(target, static_cast<size_t>(n)) + ")";
    return name;
  }

  ~PosixBackingFile() override {
    if (direct_fd_ >= 0 && direct_fd_ != fd_) close(direct_fd_);
    if (buffered_fd_ >= 0) close(buffered_fd_);
    close(fd_);
  }

  Status ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                   uint64_t known_size, size_t* got) override {
    *got = 0;
    bool aligned = IsAligned(offset) && IsAligned(len) && len > 0 && !bufs.empty() &&
                   bufs.size() <= kMaxReadBuffers;
    for (char* b : bufs) aligned = aligned && IsAligned(reinterpret_cast<uintptr_t>(b));
    if (!aligned) {
      return Status::InvalidArgument(Name() + ": read of " + std::to_string(bufs.size()) +
                                     " pages of " + std::to_string(len) + " bytes at offset " +
                                     std::to_string(offset) + " is not aligned to " +
                                     std::to_string(kIoAlignment));
    }
    const size_t total = len * bufs.size();
    iovec iov[kMaxReadBuffers];
    size_t done = 0;
    // More than one empty answer in a row has been seen as sshfs's connection dropped (the
    // shared-store test's outage check).
    constexpr int kEmptyRetries = 3;
    int asked_again = 0;
    while (done < total) {
      // The buffers from byte `done` on: the one it falls in (from its middle after a short
      // read), then the rest whole.
      const size_t first = done / len;
      int iovcnt = 0;
      for (size_t i = first; i < bufs.size(); ++i, ++iovcnt) {
        const size_t skip = i == first ? done % len : 0;
        iov[iovcnt] = iovec{bufs[i] + skip, len - skip};
      }
      // A short direct read can leave the next offset unaligned (a file whose size is not a
      // multiple of the block); unless the size says the file ends there (below), the rest of the
      // run continues buffered.
      bool direct = use_direct_.load(std::memory_order_relaxed) && IsAligned(offset + done);
      if (direct && DirectFd() < 0) continue;  // refused: use_direct_ is false now
      const int fd = direct ? direct_fd_ : BufferedFd();
      if (fd < 0) {
        return DataError(errno, Name() + ": opening it again for a buffered read at offset " +
                                    std::to_string(offset + done));
      }
      const size_t asked = total - done;
      ssize_t n = preadv(fd, iov, iovcnt, static_cast<off_t>(offset + done));
      if (n < 0) {
        int err = errno;
        if (err == EINTR) continue;
        if (direct && err == EINVAL && !direct_confirmed_.load(std::memory_order_relaxed)) {
          // The file system accepted the O_DIRECT open but not the read: read buffered from now on.
          use_direct_.store(false, std::memory_order_relaxed);
          continue;
        }
        return DataError(err, Name() + ": read of " + std::to_string(total) +
                                  " bytes at offset " + std::to_string(offset));
      }
      if (n == 0) {
        // End of file, unless the size says otherwise (or cannot be had): then the store may
        // have answered a read inside the file with nothing (sshfs does for reads in flight when
        // its connection drops, and EIO after), and an empty page would reach the reader as an
        // early end of file. Asked up to kEmptyRetries times more; then the empty answer is
        // believed (the size may be stale: another client may have truncated the file).
        if (asked_again < kEmptyRetries && !EndsAt(offset + done, known_size)) {
          ++asked_again;
          continue;
        }
        break;
      }
      if (direct) direct_confirmed_.store(true, std::memory_order_relaxed);
      done += static_cast<size_t>(n);
      // A short read is nearly always the end of the file: the size (the caller's, or asked now)
      // is looked at first, so that the end costs no second read (over a network store even a
      // read that returns nothing is a trip to its server).
      if (static_cast<size_t>(n) < asked && done < total && EndsAt(offset + done, known_size)) {
        break;
      }
    }
    *got = done;
    return Status::Ok();
  }

  Status Write(uint64_t offset, const void* buf, size_t len) override {
    const char* in = static_cast<const char*>(buf);
    size_t done = 0;
    while (done < len) {
      ssize_t n = pwrite(fd_, in + done, len - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return DataError(errno, Name() + ": write of " + std::to_string(len) +
                                    " bytes at offset " + std::to_string(offset));
      }
      if (n == 0) {
        // pwrite returning 0 for a non-empty buffer means the device will not take more.
        return Status::IOError(ENOSPC, Name() + ": write made no progress at offset " +
                                           std::to_string(offset + done));
      }
      done += static_cast<size_t>(n);
    }
    if (options_.write_through_to_device && len > 0) return WriteBack(offset, len);
    return Status::Ok();
  }

  // True if the file's size says it has no byte at `offset` (false if the size cannot be had):
  // the size the caller read just before when it ends exactly there, else the store's now.
  bool EndsAt(uint64_t offset, uint64_t known_size) const {
    if (offset == known_size) return true;
    uint64_t size;
    return SizeOf(fd_, &size) == 0 && size <= offset;
  }

  Status Size(uint64_t* size) override {
    if (SizeOf(fd_, size) != 0) return Status::FromErrno(errno, Name() + ": statx");
    return Status::Ok();
  }

  Status Sync(bool datasync) override {
    int rc = datasync ? fdatasync(fd_) : fsync(fd_);
    if (rc != 0) return Status::FromErrno(errno, Name() + (datasync ? ": fdatasync" : ": fsync"));
    return Status::Ok();
  }

  bool direct() const override { return use_direct_.load(std::memory_order_relaxed); }

 private:
  // Starts write-back of the range, waits for it (and for any already under way), then drops the
  // now clean pages: the bytes are on the device, and not kept in the kernel's cache, as after an
  // O_DIRECT write. A write-back error (EIO, ENOSPC) is the write's error, as it would be for
  // O_DIRECT.
  Status WriteBack(uint64_t offset, size_t len) {
    constexpr unsigned kWaitWriteWait =
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
    int rc;
    do {
      rc = sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(len),
                           kWaitWriteWait);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      return Status::FromErrno(errno, Name() + ": write-back of " + std::to_string(len) +
                                          " bytes at offset " + std::to_string(offset));
    }
    posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(len), POSIX_FADV_DONTNEED);
    return Status::Ok();
  }

  // The direct descriptor, opened once by the first reader that needs it; -1 if refused.
  int DirectFd() {
    std::call_once(direct_once_, [this] {
      direct_fd_ = fd_is_direct_ ? fd_ : open_direct_();
      if (direct_fd_ < 0) use_direct_.store(false, std::memory_order_relaxed);
    });
    return direct_fd_;
  }

  // The descriptor of buffered reads: fd_, unless fd_ is direct; then one opened for it once
  // (-1 with errno set if that open failed; the next buffered read tries again).
  int BufferedFd() {
    if (!fd_is_direct_) return fd_;
    std::lock_guard<std::mutex> lock(buffered_mu_);
    if (buffered_fd_ < 0) buffered_fd_ = open_buffered_();
    return buffered_fd_;
  }

  const int fd_;
  const std::function<int()> open_direct_;
  const std::function<int()> open_buffered_;  // set when fd_ is direct
  std::once_flag direct_once_;
  int direct_fd_ = -1;  // written once under direct_once_, read after it
  std::mutex buffered_mu_;
  int buffered_fd_ = -1;  // guarded by buffered_mu_; opened once, closed with the file
  // The path that messages name; empty for a file made from a descriptor (NewPosixBackingFile),
  // which Name() describes when a message needs it: resolving the descriptor's path is a
  // readlink of /proc, which every open would otherwise pay for an error it almost never has.
  const std::string name_;
  const BackingFileOptions options_;
  // Cleared, once, when the first direct read fails with EINVAL. Relaxed: both descriptors stay
  // open for the life of the file, so a thread that still sees the old value only does one more
  // failing direct read before it learns.
  std::atomic<bool> use_direct_;
  std::atomic<bool> direct_confirmed_{false};  // a direct read has succeeded: EINVAL is real
  const bool fd_is_direct_ = false;
};

// Opens `path` again for reading, with `extra` (O_DIRECT; O_NOATIME when the caller's descriptor
// has it: reads for it leave atime alone), or returns -1 with errno set: for O_DIRECT, when the
// file system refuses it (or the file cannot be reopened for reading at all: reads then fail on
// the main fd with its own, accurate errno).
int OpenForReading(const std::string& path, int extra) {
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | extra);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

class PosixBackingStore final : public BackingStore {
 public:
  explicit PosixBackingStore(std::string root) : root_(std::move(root)) {}

  Status Open(const std::string& path, int flags, mode_t mode,
              std::unique_ptr<BackingFile>* file) override {
    std::string full = Resolve(path);
    int fd;
    do {
      fd = open(full.c_str(), (flags & ~O_DIRECT) | O_CLOEXEC, mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return Status::FromErrno(errno, full + ": open");
    std::function<int()> open_direct;
    if ((flags & O_ACCMODE) != O_WRONLY) {
      open_direct = [full] { return OpenForReading(full, O_DIRECT); };
    }
    file->reset(new PosixBackingFile(fd, std::move(open_direct), full));
    return Status::Ok();
  }

 private:
  std::string Resolve(const std::string& path) const {
    if (!path.empty() && path[0] == '/') return path;
    if (root_.empty()) return path;
    if (root_.back() == '/') return root_ + path;
    return root_ + "/" + path;
  }

  const std::string root_;
};

}  // namespace

std::unique_ptr<BackingStore> NewPosixBackingStore(const std::string& root) {
  return std::make_unique<PosixBackingStore>(root);
}

Status NewPosixBackingFile(int fd, std::unique_ptr<BackingFile>* file,
                           const BackingFileOptions& options) {
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) {
    int err = errno;
    close(fd);  // ownership was taken: do not leak it even on failure
    return Status::FromErrno(err, "fd " + std::to_string(fd) + ": fcntl(F_GETFL)");
  }
  // Reopening through /proc re-checks permissions against the inode: a write-only descriptor on
  // a file the caller may not read would be refused (or, for root, granted reads the caller was
  // never given). A write-only file has no page reads to serve, so it gets no direct descriptor.
  // The /proc path names `fd`, which the file keeps open until it goes.
  if ((flags & O_DIRECT) && (flags & O_ACCMODE) == O_RDONLY) {
    auto open_buffered = [proc, noatime = flags & O_NOATIME] {
      return OpenForReading(proc, noatime);
    };
    file->reset(new PosixBackingFile(PosixBackingFile::DirectDescriptor{}, fd,
                                     std::move(open_buffered), std::string(), options));
    return Status::Ok();
  }
  std::function<int()> open_direct;
  if ((flags & O_ACCMODE) != O_WRONLY) {
    open_direct = [proc, noatime = flags & O_NOATIME] {
      return OpenForReading(proc, O_DIRECT | noatime);
    };
  }
  file->reset(new PosixBackingFile(fd, std::move(open_direct), std::string(), options));
  return Status::Ok();
}

}  // namespace ccfs
