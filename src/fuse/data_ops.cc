// Handlers for open files (see ops.h): where a page read reaches the PageCache and a write goes
// through it to the backing file.
//
// raw_tier = daemon: data files are opened with direct_io and keep_cache off, so every read reaches
// the engine: the kernel page cache never answers a repeat, and the engine's hit ratio is the
// reader's hit ratio. raw_tier = kernel: keep_cache, so the kernel keeps what it was sent across
// opens and answers repeats itself; every page sent or written is noted in the kernel ledger
// (kernel_cache.h), which holds the kernel's share of memory.
// What the caller's open flags mean for the backing descriptor is open_flags.h's; when a write or
// a truncation must clear set-id bits, kill_priv.h's. CREATE creates the file with the caller's
// identity (caller_identity.h).
// Each read first asks the ChangeDetector whether the backing file changed underneath; writes,
// truncations and fallocates hold an OwnChange across check, change and record.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ccfs/backing_store.h"
#include "ccfs/mount_protocol.h"
#include "fuse/caller_identity.h"
#include "fuse/kill_priv.h"
#include "fuse/log.h"
#include "fuse/open_flags.h"
#include "fuse/ops.h"
#include "fuse/session_io.h"

namespace ccfs::ops {

namespace {

// Runs `open_fn` (an open(2)-like call: a descriptor, or -1 with errno set); when it fails for want
// of descriptors, the kept read handles are let go and the inode table closes its idle ones (and
// logs the shortage), and it runs once more.
template <typename OpenFn>
int OpenShedding(FsContext* fs, OpenFn open_fn) {
  int fd = open_fn();
  if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
    const int err = errno;
    const bool shed = fs->read_handles.Shed() > 0;  // their descriptors close unless in use
    if (fs->inodes.Shed(err) || shed) {
      fd = open_fn();
    } else {
      errno = err;
    }
  }
  return fd;
}

// Wraps `fd`, an open descriptor of `i` opened with `open_flags`, in a FileHandle, into *out.
// Takes `fd` (closed on failure). Returns 0 or the errno.
int MakeHandle(FsContext* fs, Inode* i, int fd, int open_flags, std::unique_ptr<FileHandle>* out) {
  std::unique_ptr<BackingFile> backing;
  Status s = NewPosixBackingFile(fd, &backing, BackingFileOptionsFor(open_flags));
  if (!s.ok()) {
    LogWarning(fmt::format("open inode {}: {}", i->ino, s.ToString()));
    return s.ToErrno();
  }
  // sftp (a read-only mount): the page reads go over SFTP, from the path the table knows for the
  // file; a file with no name left (removed through the mount) is read through the store's mount.
  std::string path;
  if (fs->config.sftp != nullptr && (open_flags & O_ACCMODE) == O_RDONLY &&
      fs->inodes.PathOf(i, &path)) {
    backing = fs->config.sftp->Wrap(path, std::move(backing));
  }
  auto h = std::make_unique<FileHandle>();
  h->inode = i;
  h->fd = fd;  // the backing file's, closed by it
  h->append = (open_flags & O_APPEND) != 0;
  h->backing = std::move(backing);
  *out = std::move(h);
  return 0;
}

// A file under `pin` is told to the engine at its first open after each change of `pin` (for a
// file opened without OPEN, at its first read that reaches the daemon).
void NotePins(FsContext* fs, Inode* i) {
  if (!fs->pins.any()) return;
  const uint64_t generation = fs->pins.generation();
  if (i->pin_generation.exchange(generation, std::memory_order_acq_rel) != generation) {
    std::string path;
    if (fs->inodes.PathOf(i, &path) && fs->pins.Matches(path)) fs->pins.Pin(i->file_id);
  }
}

// Registers `h`, a handle of the data file `i`, in fs->files, named by fi->fh.
void AttachMade(FsContext* fs, Inode* i, std::unique_ptr<FileHandle> h, fuse_file_info* fi) {
  const int fd = h->fd;
  const bool kernel_tier = fs->kernel != nullptr;
  fi->direct_io = kernel_tier ? 0 : 1;
  fi->keep_cache = kernel_tier ? 1 : 0;
  // A read-only open has nothing to flush: no write went through it, and the kernel keeps POSIX
  // locks itself (no lock ops here). Its close then costs the kernel no FLUSH trip.
  fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY ? 1 : 0;
  fi->fh = fs->files.Add(std::move(h));
  fs->inodes.HandleOpened(i, fd);
  NotePins(fs, i);
}

// Wraps an open descriptor of a data file in a FileHandle, registered in fs->files and named by
// fi->fh. Takes `fd` (closed on failure). Returns 0 or the errno.
int AttachHandle(FsContext* fs, Inode* i, int fd, fuse_file_info* fi) {
  std::unique_ptr<FileHandle> h;
  int err = MakeHandle(fs, i, fd, fi->flags, &h);
  if (err != 0) return err;
  AttachMade(fs, i, std::move(h), fi);
  return 0;
}

// A handle of `i` reading through the same descriptor and backing file as `from`.
std::unique_ptr<FileHandle> SharedHandle(Inode* i, const FileHandle& from) {
  auto h = std::make_unique<FileHandle>();
  h->inode = i;
  h->fd = from.fd;
  h->backing = from.backing;
  h->kept = true;
  return h;
}

// Opens the data file `i` with `flags` (O_CLOEXEC added). A read-only open is opened O_DIRECT at
// once: the engine reads its pages through such a descriptor, which would otherwise be a second
// open (and close) of the backing file, each a trip to a network store's server (backing_store.h
// NewPosixBackingFile). A store that refuses O_DIRECT is asked once per mount. Returns the
// descriptor, or -1 with errno set.
int OpenDataFile(FsContext* fs, Inode* i, int flags) {
  const bool direct = (flags & O_ACCMODE) == O_RDONLY &&
                      !fs->direct_open_refused.load(std::memory_order_relaxed);
  InodeFd path_fd = fs->inodes.Borrow(i);
  if (!path_fd) {
    errno = path_fd.error();
    return -1;
  }
  const std::string path = ProcPath(path_fd.get());
  int fd = -1;
  if (direct) {
    fd = OpenShedding(fs, [&] { return open(path.c_str(), flags | O_DIRECT | O_CLOEXEC); });
    if (fd < 0 && errno == EINVAL) fs->direct_open_refused.store(true, std::memory_order_relaxed);
  }
  if (fd < 0 && (!direct || errno == EINVAL)) {
    fd = OpenShedding(fs, [&] { return open(path.c_str(), flags | O_CLOEXEC); });
  }
  return fd;
}

// A handle its holder does not own: the one an OPEN made, which lives until RELEASE.
std::shared_ptr<FileHandle> Unowned(FileHandle* h) {
  return std::shared_ptr<FileHandle>(std::shared_ptr<FileHandle>(), h);
}

// A read handle for `i` (read_handles.h): the one kept, or one opened now and kept. Null with
// *err set when none could be had. Handles the bound pushes out go to *let_go if given, for the
// caller to close once it has replied (ReadHandles::Keep).
using LetGo = std::vector<std::shared_ptr<FileHandle>>;
std::shared_ptr<FileHandle> ReadHandleFor(FsContext* fs, Inode* i, int* err,
                                          LetGo* let_go = nullptr) {
  std::shared_ptr<FileHandle> h = fs->read_handles.Find(i);
  if (h) return h;
  const int fd = OpenDataFile(fs, i, O_RDONLY);
  if (fd < 0) {
    *err = errno;
    return nullptr;
  }
  std::unique_ptr<FileHandle> made;
  *err = MakeHandle(fs, i, fd, O_RDONLY, &made);
  if (*err != 0) return nullptr;
  return fs->read_handles.Keep(i, std::shared_ptr<FileHandle>(std::move(made)), let_go);
}

// The handle a request on the open data file `i` uses: the one its OPEN made, or for a file the
// kernel opened without one (fi->fh == 0, FsContext::no_open) or one whose descriptor is a kept
// read handle's (FileHandle::kept: see Read) the file's read handle.
std::shared_ptr<FileHandle> HandleFor(FsContext* fs, Inode* i, fuse_file_info* fi, int* err) {
  if (fi->fh != 0 && !FileOf(fi)->kept) return Unowned(FileOf(fi));
  return ReadHandleFor(fs, i, err);
}

// Whether the tiers hold every page of the file `file_id` of `size` bytes.
bool HeldWhole(FsContext* fs, uint64_t file_id, uint64_t size) {
  const uint64_t page = fs->cache->options().page_size;
  const uint64_t pages = (size + page - 1) / page;
  const PageCache::Residency r = fs->cache->ResidencyOf(file_id, 0, pages);
  return r.raw_pages + r.compressed_pages >= pages;
}

// A prefetch of a walk (listing_walk.h), on a read-ahead thread: the file the table knows by
// `key`, checked for changes as a read checks it (so that pages cached before a change are not
// served for the file as it is now) and opened as its read handle, which the reader's OPEN or
// first miss then uses. Null, with nothing read, when the file is gone, is not the one listed, is
// empty, has grown past `max_size`, or (kernel mode) its reader got to it first. *len: its size.
std::shared_ptr<BackingFile> OpenListed(FsContext* fs, InodeKey key, uint64_t file_id,
                                        uint64_t max_size, uint64_t* len) {
  Inode* i = nullptr;
  std::optional<FileSignature> opened;
  InodeFd path_fd = fs->inodes.BorrowKnown(key, &i, S_IFREG, &opened);
  if (!path_fd || i->file_id != file_id) return nullptr;
  // In kernel mode the pages a reader was sent leave the daemon's tiers for the kernel's: a reader
  // that got to the file before this prefetch would find its pages read once more, never asked
  // for (readahead_wasted), at the cost of a backing read. Its first page sent says it has.
  if (fs->kernel != nullptr && fs->kernel->Holds(fs->inodes.InoOf(i), 0)) return nullptr;
  // A descriptor opened now was checked by a statx that read what the change check reads.
  const uint64_t size = opened ? fs->changes.CheckSignature(i, *opened)
                               : fs->changes.CheckBeforeRead(i, path_fd.get());
  if (size == 0 || size > max_size) return nullptr;  // UINT64_MAX: statx failed
  int err = 0;
  std::shared_ptr<FileHandle> h = ReadHandleFor(fs, i, &err);
  if (!h) return nullptr;
  *len = size;
  return h->backing;
}

// Queues the small files of a walk (listing_walk.h) to be read ahead, each once, but those whose
// pages the tiers already hold. Only lookups here; the opens and reads are the read-ahead
// threads'.
void QueueWalk(FsContext* fs, const std::vector<InodeTable::ListedFile>& files) {
  if (files.empty()) return;
  const uint64_t whole_file_bytes = fs->cache->WholeFileBytes();
  for (const InodeTable::ListedFile& f : files) {
    if (!fs->walk.FirstQueue(f.key)) continue;
    if (HeldWhole(fs, f.file_id, f.size)) continue;  // in the tiers: no open needed
    const bool queued = fs->cache->PrefetchFile(
        f.file_id, [fs, gate = fs->walk.gate(), key = f.key, id = f.file_id,
                    whole_file_bytes](uint64_t* len) -> std::shared_ptr<BackingFile> {
          if (!gate->Enter()) return nullptr;  // the mount is going
          std::shared_ptr<BackingFile> file = OpenListed(fs, key, id, whole_file_bytes, len);
          gate->Leave();
          return file;
        });
    if (!queued) {  // the queue is full: the walk's next read queues the rest, this one too
      fs->walk.Unqueue(f.key);
      return;
    }
  }
}

// The regular files of a walk from `from` on in `order`, as many as one prefetch takes.
std::vector<InodeTable::ListedFile> WalkFiles(FsContext* fs, InodeKey from, ListingOrder order) {
  return fs->inodes.ListedFrom(from, order, ListingWalk::kMaxFiles, fs->cache->WholeFileBytes(),
                               fs->cache->ReadAheadWindow());
}

// `i`, a small file, is being read from its start: if that continues a walk of its directory in
// one of its listing's orders, the files after it are queued to be read ahead.
void WalkAhead(FsContext* fs, Inode* i) {
  InodeKey parent;
  const std::array<InodeKey, kListingOrders> next = fs->inodes.NextFilesOf(i, &parent);
  ListingOrder order = kListedOrder;
  if (!fs->walk.Started(KeyOf(*i), parent, next, &order)) return;
  QueueWalk(fs, WalkFiles(fs, next[order], order));
}

// Drops what a change underneath made stale of the open data file `i` (ChangeDetector::
// CheckBeforeRead) and returns its size now (UINT64_MAX: unknown), or sets *err. A file opened
// without OPEN, or whose descriptor is a kept read handle's (FileHandle::kept), is checked through
// the Inode's own descriptor, never through a kept read handle, and before that handle is looked
// up: over a store that names files by path (sshfs) the handle goes on naming the file it opened
// after another client renamed a new one over the name, where the Inode's descriptor names what
// the name names now; a change found lets the handle go (FsContext's stale callback), and the read
// opens the file anew. Such files are kernel mode's, where the kernel serves its own pages without
// asking for attr_timeout: with close_to_open = false, attributes read from the store less than
// that ago stand for the check here as at OPEN (OpenKept), and a read the tiers answer costs the
// store nothing.
uint64_t CheckFile(FsContext* fs, Inode* i, fuse_file_info* fi, int* err) {
  if (fi->fh != 0 && !FileOf(fi)->kept) return fs->changes.CheckBeforeRead(i, FileOf(fi)->fd);
  struct stat recent;
  double left_s = 0;
  if (!fs->config.close_to_open &&
      fs->changes.RecentAttributes(i, AttrTimeoutNs(fs), &recent, &left_s)) {
    return static_cast<uint64_t>(recent.st_size);
  }
  InodeFd path_fd = fs->inodes.Borrow(i);
  if (!path_fd) {
    *err = path_fd.error();
    return UINT64_MAX;
  }
  return fs->changes.CheckBeforeRead(i, path_fd.get());
}

// Kernel mode: bytes [off, off + len) of `ino` (the engine's `file_id`) are now in the kernel's
// page cache, unless the caller opened the file O_DIRECT (its reads and writes bypass that cache).
// The pages the engine keeps out of the kernel (its curve's sample under auto) are dropped soon
// instead of entering the ledger. Called after the reply too, when the handle and the Inode may be
// gone: it touches neither.
void NoteSentToKernel(FsContext* fs, int open_flags, fuse_ino_t ino, uint64_t file_id, off_t off,
                      size_t len) {
  if (fs->kernel == nullptr || (open_flags & O_DIRECT) || len == 0) return;
  const uint64_t page = fs->kernel->page_size();
  const uint64_t begin = static_cast<uint64_t>(off), end = begin + len;
  // Runs of pages alike (all kept out, or none), each told to the ledger or dropped as one.
  uint64_t run = begin;
  bool run_kept = fs->cache->KeepsFromKernel(file_id, begin / page);
  for (uint64_t p = begin / page + 1; p * page < end; ++p) {
    const bool kept = fs->cache->KeepsFromKernel(file_id, p);
    if (kept == run_kept) continue;
    const uint64_t at = p * page;
    if (run_kept) {
      fs->kernel->DropSoon(ino, run, at - run);
    } else {
      fs->kernel->Served(ino, file_id, run, at - run);
    }
    run = at;
    run_kept = kept;
  }
  if (run_kept) {
    fs->kernel->DropSoon(ino, run, end - run);
  } else {
    fs->kernel->Served(ino, file_id, run, end - run);
  }
}

// passthrough: the last passed-through open of `i` is gone, and a writable one was among them
// (fuse/passthrough.h): its writes reached the store unseen, so what the tiers hold of the file
// (a walk's prefetch may have loaded pages meanwhile) and the kernel's pages of it go, and the
// signature the writes left is recorded as the mount's own change.
void DropPassedWrites(FsContext* fs, Inode* i, fuse_ino_t ino) {
  ChangeDetector::MountChange change_through_mount(&fs->changes);
  InodeFd path_fd = fs->inodes.Borrow(i);
  if (path_fd) {
    ChangeDetector::OwnChange change(&fs->changes, i, path_fd.get());
    change.DropFrom(0);
    change.Record(path_fd.get());
  } else {
    fs->cache->InvalidateFile(i->file_id);
  }
  fs->read_handles.Forget(i);
  fs->kernel->InvalidateFrom(ino, 0);
}

void DetachHandle(FsContext* fs, fuse_file_info* fi) {
  const FileHandle* h = FileOf(fi);
  Inode* i = h->inode;
  const bool counted = h->mode_counted;
  const int32_t backing_id = h->backing_id;
  fs->files.Remove(fi->fh);
  fi->fh = 0;
  if (counted && fs->passthrough->Release(i, backing_id)) {
    DropPassedWrites(fs, i, fs->inodes.InoOf(i));
  }
  fs->inodes.HandleClosed(i);  // after the handle's descriptors are closed
}

// passthrough: whether INIT agreed to it (the kernel offered it and the key asked).
bool PassingThrough(const FsContext* fs) {
  return fs->passthrough != nullptr && (InitFlagsAdded() & kInitPassthrough) != 0;
}

// passthrough: counts the open just attached as fi->fh in its file's mode, and has its reply
// pass it through when the file's other opens are (it may not start passthrough itself).
void TakeOpenMode(FsContext* fs, Inode* i, fuse_file_info* fi) {
  if (!PassingThrough(fs)) return;
  FileHandle* h = FileOf(fi);
  h->mode_counted = true;
  h->backing_id = fs->passthrough->Open(i, false, (fi->flags & O_ACCMODE) != O_RDONLY, nullptr);
  if (h->backing_id > 0) {
    fi->keep_cache = 0;
    fi->direct_io = 0;
    ReplyPassthrough(h->backing_id);
  }
}

// Whether the tiers hold no page of the first `size` bytes of file `file_id`: looked up a run at a
// time, stopping at the first page held.
bool HeldNone(FsContext* fs, uint64_t file_id, uint64_t size) {
  const uint64_t page = fs->cache->options().page_size;
  const uint64_t pages = (size + page - 1) / page;
  constexpr uint64_t kRun = 256;
  for (uint64_t first = 0; first < pages; first += kRun) {
    const PageCache::Residency r =
        fs->cache->ResidencyOf(file_id, first, std::min(kRun, pages - first));
    if (r.raw_pages + r.compressed_pages > 0) return false;
  }
  return true;
}

// openat(dirfd, name, flags, mode) for CREATE (`flags` has O_CREAT), telling in *created whether
// the file is new. The kernel sends CREATE for a name it found absent, but the file may have been
// made in DATASET since; such a file must be treated as an OPEN would treat it (an O_TRUNC open
// clears set-id bits, a creation keeps the ones asked for), so the two cases are told apart by
// trying O_EXCL first. Returns the descriptor, or -1 with errno set.
int OpenOrCreate(int dirfd, const char* name, int flags, mode_t mode, bool* created) {
  for (;;) {
    int fd = openat(dirfd, name, flags | O_EXCL, mode);
    if (fd >= 0 || errno != EEXIST || (flags & O_EXCL)) {
      *created = fd >= 0;
      return fd;
    }
    fd = openat(dirfd, name, flags & ~O_CREAT);
    if (fd >= 0 || errno != ENOENT) {
      *created = false;
      return fd;
    }
    // Removed between the two calls: create it after all.
  }
}

// Runs a request's rest, which may wait for the store and gives the request its one reply: here
// (`here()`) while another request thread is free (FsContext::inline_misses), else on the miss
// pool, so that this thread takes the next request meanwhile: `elsewhere()` is then asked, on this
// thread, for a std::function<void()> that owns what it uses (the handler's arguments and this
// thread's buffers are gone once the handler returns); here after all when every pool thread is
// busy. Templates, not std::function, so that a miss run here costs no allocation.
template <typename Here, typename Elsewhere>
void RunMayWait(FsContext* fs, Here&& here, Elsewhere&& elsewhere) {
  if (fs->misses != nullptr) {
    const bool ring = RequestFromRing();
    if (!ring && fs->inline_misses.fetch_add(1, std::memory_order_acq_rel) <
                     fs->config.request_threads - 1) {
      here();
      fs->inline_misses.fetch_sub(1, std::memory_order_acq_rel);
      return;
    }
    if (!ring) fs->inline_misses.fetch_sub(1, std::memory_order_acq_rel);
    ReplyCapture later;
    if (DeferReply(&later)) {
      const RequestTime time = HandOffRequestTime();  // counted when the reply is given
      std::function<void()> rest = [later, time, work = std::function<void()>(elsewhere())] {
        SetReplyCapture(ReplyRoute(later));
        work();
        ReplyDelivered(later);
        time.Done();
      };
      if (fs->misses->TryRun(&rest)) return;
      KeepRequestTime();
      KeepReply();
    }
  }
  here();
}

// The pages of `r`'s range and what the tiers hold of them, into `r`.
void FillResidency(FsContext* fs, uint64_t file_id, uint64_t size, WarmRange* r) {
  const uint64_t page = fs->cache->options().page_size;
  const uint64_t first = r->offset / page;
  const uint64_t end_byte = r->length == 0 ? size : std::min(size, r->offset + r->length);
  const uint64_t end = (end_byte + page - 1) / page;
  r->pages = end > first ? end - first : 0;
  const PageCache::Residency res = fs->cache->ResidencyOf(file_id, first, r->pages);
  r->raw_pages = res.raw_pages;
  r->compressed_pages = res.compressed_pages;
  r->compressed_bytes = res.compressed_bytes;
  r->page_size = static_cast<uint32_t>(page);
  r->kernel_tier = fs->kernel != nullptr ? 1 : 0;
}

// Kernel mode, a read-write mount: a read-only OPEN of `i` (backing flags `flags`). The file is
// checked first, through the Inode's own descriptor, which names what the file's name names now (a
// fresh open would open the same), so a change found lets the kept read handle go before it is
// looked up (FsContext's stale callback) and a handle is used only for the file as it is: one that
// opens after a change reads the file anew (with close_to_open = false, attributes read less than
// attr_timeout ago stand for the check). Then the handle, whose reads go through the read handle
// kept at the time of each (read_handles.h; see Read), is:
//   - the read handle kept of the file, if there is one;
//   - else, when the tiers hold every page of the file, a handle with no descriptor (fd -1): a
//     file read again costs a network store's server no open and no close, even when the tree has
//     more files than the bound keeps read handles of. Its first read that must reach the store
//     (the pages pushed out meanwhile) opens the read handle then;
//   - else the store's file opened now, kept as the read handle past RELEASE for the next opens.
//     An open made here reads the file it opened to its end, as POSIX has it, even after another
//     client renamed a new file over the name (a store that names files by inode, GlusterFS,
//     answers ESTALE to a later open of the old one); a handle with no descriptor pushed out of
//     the tiers and read after such a rename gets that ESTALE, as an NFS client's reader would.
// Replies to the OPEN.
void OpenKept(FsContext* fs, fuse_req_t req, Inode* i, int flags, fuse_file_info* fi) {
  // Handles the bound pushes out: closed after the reply, so that the opener does not wait for
  // their closes (each a round trip to a network store's server).
  LetGo let_go;
  bool changed = false;
  uint64_t size = UINT64_MAX;  // unknown: the check failed, and the open below reports why
  // close_to_open = false: attributes read from the store less than attr_timeout ago stand for
  // the check (ChangeDetector::RecentAttributes): a file the tiers hold whole then opens with no
  // trip to the store, and no descriptor of its name (over a store that forgot the file, a lookup
  // on its server).
  struct stat recent;
  double left_s = 0;
  if (!fs->config.close_to_open &&
      fs->changes.RecentAttributes(i, AttrTimeoutNs(fs), &recent, &left_s)) {
    size = static_cast<uint64_t>(recent.st_size);
  } else {
    InodeFd path_fd = fs->inodes.Borrow(i);
    if (!path_fd) return (void)ReplyErr(req, path_fd.error());
    changed = fs->changes.CheckOpenFile(i, path_fd.get(), &size);
  }
  // passthrough: the open's mode (fuse/passthrough.h). A file of unknown size is not passed
  // through: its check failed, and the open below reports why.
  const bool counted = PassingThrough(fs);
  int32_t backing_id = 0;
  if (counted) {
    const bool may_start = size != UINT64_MAX &&
                           !i->passed_through.load(std::memory_order_relaxed) &&
                           HeldNone(fs, i->file_id, size);
    backing_id = fs->passthrough->Open(i, may_start, false, [fs, i] {
      InodeFd path_fd = fs->inodes.Borrow(i);
      if (!path_fd) {
        errno = path_fd.error();
        return -1;
      }
      const std::string path = ProcPath(path_fd.get());
      return OpenShedding(fs, [&] { return open(path.c_str(), O_RDONLY | O_CLOEXEC); });
    });
  }
  std::unique_ptr<FileHandle> h;
  if (backing_id > 0) {
    // The kernel reads the file itself: no read handle is needed, and the file's next open
    // (after this one's mode ends) is served by the tiers.
    i->passed_through.store(true, std::memory_order_relaxed);
    h = std::make_unique<FileHandle>();
    h->inode = i;
    h->kept = true;
  } else if (std::shared_ptr<FileHandle> kept = fs->read_handles.Find(i)) {
    h = SharedHandle(i, *kept);
  } else if (size != UINT64_MAX && HeldWhole(fs, i->file_id, size)) {
    h = std::make_unique<FileHandle>();
    h->inode = i;
    h->kept = true;
  } else {
    const int fd = OpenDataFile(fs, i, flags);
    const int err = fd < 0 ? errno : MakeHandle(fs, i, fd, fi->flags, &h);
    if (err != 0) {
      if (counted) fs->passthrough->Release(i, 0);
      return (void)ReplyErr(req, err);
    }
    fs->read_handles.Keep(i, std::shared_ptr<FileHandle>(SharedHandle(i, *h)), &let_go);
    h->kept = true;
  }
  h->mode_counted = counted;
  h->backing_id = backing_id;
  AttachMade(fs, i, std::move(h), fi);
  if (changed || backing_id > 0) fi->keep_cache = 0;
  if (backing_id > 0) {
    fi->direct_io = 0;
    ReplyPassthrough(backing_id);
  }
  if (fuse_reply_open(req, fi) == -ENOENT) DetachHandle(fs, fi);  // the caller was interrupted
}

}  // namespace

void WalkInto(FsContext* fs, Inode* dir, const std::array<InodeKey, kListingOrders>& firsts) {
  ListingOrder order = kListedOrder;
  ListingWalk::Place place;
  if (!fs->walk.Walking(&order, &place) || firsts[order].second == 0) return;
  if (!fs->inodes.InTurn(KeyOf(*dir), place.dir, place.entry, order)) return;
  const std::vector<InodeTable::ListedFile> files = WalkFiles(fs, firsts[order], order);
  if (files.empty()) {  // no file to read: the walk goes on from its start to the next listing
    fs->walk.At(ListingWalk::Place{KeyOf(*dir), InodeKey{}});
    return;
  }
  fs->walk.Into(files.front().key, order);
  QueueWalk(fs, files);
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Open(req, i, fi);
  if (i->type == S_IFDIR) return (void)ReplyErr(req, EISDIR);
  if (i->type != S_IFREG) return (void)ReplyErr(req, ELOOP);
  // A read-only mount in kernel mode opens its data files without this trip, and without RELEASE
  // (read_handles.h): answered ENOSYS, the kernel stops sending either for every file after this
  // one, and opens this one too.
  if (fs->no_open.load(std::memory_order_relaxed)) return (void)ReplyErr(req, ENOSYS);
  int flags = BackingOpenFlags(fi->flags) & ~(O_NOFOLLOW | O_CREAT | O_EXCL);
  // O_NOATIME: its reads go through a descriptor of its own with the flag, as a read of DATASET
  // itself would leave the atime alone; the read handles are opened without it.
  if (fs->kernel != nullptr && (flags & O_ACCMODE) == O_RDONLY &&
      (flags & (O_TRUNC | O_NOATIME)) == 0) {
    return OpenKept(fs, req, i, flags, fi);
  }
  const int fd = OpenDataFile(fs, i, flags);
  if (fd < 0) return (void)ReplyErr(req, errno);
  if (OpenTruncMustClearSetId(flags, fuse_req_ctx(req)->uid)) ClearSetId(fd, req);
  // Kernel mode: a file changed underneath since the last check is opened without keep_cache, so
  // the kernel drops its pages of it before the open returns (close-to-open: a reader that opens
  // after a change sees it, whatever the kernel holds; open_file_watch.h).
  bool changed = false;
  if (flags & O_TRUNC) {
    fs->changes.TruncatedByOpen(i, fd);
  } else if (fs->kernel != nullptr) {
    changed = fs->changes.CheckOpenFile(i, fd);
  }
  int err = AttachHandle(fs, i, fd, fi);
  if (err != 0) return (void)ReplyErr(req, err);
  if (changed) fi->keep_cache = 0;
  TakeOpenMode(fs, i, fi);
  if (fuse_reply_open(req, fi) == -ENOENT) DetachHandle(fs, fi);  // the caller was interrupted
}

void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* p = fs->inodes.Get(parent);
  if (p->kind != NodeKind::kReal) return (void)ReplyErr(req, EACCES);
  if (IsVirtualName(fs, p, name)) return (void)ReplyErr(req, EEXIST);
  int flags = BackingOpenFlags(fi->flags | O_CREAT) & ~O_NOFOLLOW;
  bool created = false;
  int fd = -1;
  int err = 0;
  {
    InodeFd dir = fs->inodes.Borrow(p);
    CallerIdentity caller(req);
    err = dir ? caller.error() : dir.error();
    if (err == 0) {
      fd = OpenShedding(fs, [&] {
        return OpenOrCreate(dir.get(), name, flags | O_CLOEXEC, mode, &created);
      });
    }
    if (err == 0 && fd < 0) err = errno;
  }
  if (err != 0) return (void)ReplyErr(req, err);
  // A file that existed was opened, and truncated if O_TRUNC, like any OPEN: the truncation clears
  // the set-id bits as an OPEN's does. The backing open already did for a caller it saw without
  // CAP_FSETID; this is for one the kernel says lacks it while the daemon acted with it (uid 0).
  if (!created && OpenTruncMustClearSetId(flags, fuse_req_ctx(req)->uid)) ClearSetId(fd, req);
  fuse_entry_param e;
  err = LookupEntry(fs, p, name, &e);
  if (err != 0) {
    close(fd);
    return (void)ReplyErr(req, err);
  }
  Inode* i = fs->inodes.Get(e.ino);
  if (flags & O_TRUNC) fs->changes.TruncatedByOpen(i, fd);
  err = AttachHandle(fs, i, fd, fi);
  if (err != 0) {
    fs->inodes.Unref(i, 1);
    return (void)ReplyErr(req, err);
  }
  TakeOpenMode(fs, i, fi);
  if (fuse_reply_create(req, &e, fi) == -ENOENT) {
    DetachHandle(fs, fi);
    fs->inodes.Unref(i, 1);
  }
}

// One buffer per thread that finishes reads, grown to the largest read seen; the reply copies out
// of it before the thread takes its next read. Aligned for O_DIRECT, so that the engine may read
// a request's pages from the store straight into it (PageCache::Read, pass_through_pages).
char* ReadBuffer(size_t size) {
  thread_local IoBuffer buffer(nullptr, &std::free);
  thread_local size_t have = 0;
  if (have < size) {
    have = size;
    buffer = NewIoBuffer(size);
  }
  return buffer.get();
}

// A buffer of `size` bytes for one read finished on a miss pool thread: aligned as ReadBuffer's
// (the store may read into it with O_DIRECT) and not zeroed (the read fills what it replies
// with). Taken from operator new and aligned within: glibc's aligned_alloc of a request's size
// took fresh pages from the kernel for most reads of a stream (results/pool-read-buffer).
std::shared_ptr<char> PoolReadBuffer(size_t size) {
  std::shared_ptr<char[]> block(new char[size + kIoAlignment]);
  const uintptr_t past = reinterpret_cast<uintptr_t>(block.get()) % kIoAlignment;
  return std::shared_ptr<char>(block, block.get() + (kIoAlignment - past) % kIoAlignment);
}

// Answers a read of [off, off + size) with the `n` bytes in `buf` (n < size: the read reached
// the end of the file), reading ahead of it first. The handle is not touched after the reply.
void ReplyRead(FsContext* fs, fuse_req_t req, fuse_ino_t ino, uint64_t file_id, FileHandle* h,
               int open_flags, off_t off, size_t size, const char* buf, size_t n) {
  // Daemon mode only: in kernel mode the kernel reads ahead (fuse/mount_readahead.h). Before the
  // reply: once it is sent, the kernel may RELEASE the handle.
  if (fs->kernel == nullptr) {
    fs->cache->ReadAhead(&h->stream, file_id, h->backing, static_cast<uint64_t>(off), n, n < size);
  }
  if (fuse_reply_buf(req, buf, n) == 0) NoteSentToKernel(fs, open_flags, ino, file_id, off, n);
}

// A read of [off, off + size) whose first `have` bytes are in `buf` already: reads the rest
// (waiting for the store if it must; a miss loads up to `load_to`, PageCache::Read), reads ahead,
// replies. The handle stays valid until the reply: the kernel holds the open file for as long as
// one of its reads is unanswered. `kept_for`: the Inode whose kept read handle `h` is or reads
// through (FileHandle::kept), else null.
void FinishRead(FsContext* fs, fuse_req_t req, fuse_ino_t ino, uint64_t file_id, FileHandle* h,
                Inode* kept_for, int open_flags, off_t off, size_t size, char* buf, size_t have,
                uint64_t load_to) {
  size_t n = 0;
  Status s = fs->cache->Read(file_id, h->backing.get(), static_cast<uint64_t>(off) + have,
                             size - have, buf + have, &n, load_to);
  std::shared_ptr<FileHandle> fresh;
  if (!s.ok() && kept_for != nullptr) {
    // A kept read handle may be one the store has let go since it was opened (sshfs's handles
    // die with its connection when the server restarts), and no close will ever come to retire
    // it: it goes, and the read is tried once more through a handle opened now, the file checked
    // through it first. Should that fail too, the reader gets the first error.
    fs->read_handles.Forget(kept_for, h->backing.get());
    int err = 0;
    fresh = ReadHandleFor(fs, kept_for, &err);
    if (fresh) {
      h = fresh.get();
      fs->changes.CheckBeforeRead(kept_for, h->fd);
      n = 0;
      Status again = fs->cache->Read(file_id, h->backing.get(),
                                     static_cast<uint64_t>(off) + have, size - have, buf + have,
                                     &n, load_to);
      if (again.ok()) s = again;
    }
  }
  if (!s.ok()) return (void)ReplyErr(req, s.ToErrno());
  ReplyRead(fs, req, ino, file_id, h, open_flags, off, size, buf, n + have);
}

void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Read(req, i, size, off, fi);
  // A file opened without an OPEN (fi->fh == 0) has its read handle opened only when a read must
  // reach the store: a read the tiers answer costs the store no open.
  if (fi->fh == 0) NotePins(fs, i);  // as an OPEN would have
  int err = 0;
  const uint64_t file_size = CheckFile(fs, i, fi, &err);
  if (err != 0) return (void)ReplyErr(req, err);
  // An open file whose descriptor is a kept read handle's (FileHandle::kept) reads through the
  // read handle kept now, not necessarily its own: its own may have been let go since (the file
  // found changed, or pushed out by the bound), and over a store that names files by path (sshfs)
  // it may then name the file as it was before another client renamed a new one over it; pages
  // read through it would enter the cache as the file's current ones.
  const bool by_read_handle = fi->fh == 0 || FileOf(fi)->kept;
  std::shared_ptr<FileHandle> h =
      by_read_handle ? fs->read_handles.Find(i) : Unowned(FileOf(fi));
  Inode* const kept_for = by_read_handle && h ? i : nullptr;
  const uint64_t file_id = i->file_id;
  // A file no larger than its reader's read-ahead window, read from its start, is loaded whole at
  // its first miss: one read of the store where the window's requests would each be one (a tree
  // of small files read by tar, grep or an interpreter's imports). An unknown size (UINT64_MAX)
  // never qualifies.
  const uint64_t whole_file_bytes = fs->cache->WholeFileBytes();
  const uint64_t load_to = off == 0 && file_size <= whole_file_bytes ? file_size : 0;
  if (load_to != 0) WalkAhead(fs, i);
  char* buf = ReadBuffer(size);
  size_t have = 0;
  // What the tiers hold is served here; a read that must wait for the store goes to the miss
  // pool, so this thread takes the next request meanwhile. (No handle yet: kernel mode, where
  // ReplyRead does not use it.)
  if (fs->misses != nullptr || !h) {
    bool whole = true;
    Status s = fs->cache->TryRead(file_id, static_cast<uint64_t>(off), size, buf, &have, &whole);
    if (!s.ok()) return (void)ReplyErr(req, s.ToErrno());
    if (whole) return ReplyRead(fs, req, ino, file_id, h.get(), fi->flags, off, size, buf, have);
  }
  // Read handles the bound pushes out for this one: closed once the read is answered (over a
  // network store each close is a round trip to its server, which the reader need not wait for).
  LetGo let_go;
  if (!h) {
    h = ReadHandleFor(fs, i, &err, &let_go);
    if (!h) return (void)ReplyErr(req, err);
  }
  const int open_flags = fi->flags;
  RunMayWait(
      fs,
      [&] {
        FinishRead(fs, req, ino, file_id, h.get(), kept_for, open_flags, off, size, buf, have,
                   load_to);
      },
      [&] {
        // The read's own buffer, with what the tiers gave: pool threads keep no buffer between
        // reads, so the daemon holds buffers for the reads in flight only.
        std::shared_ptr<char> own = PoolReadBuffer(size);
        std::memcpy(own.get(), buf, have);
        auto closes = std::make_shared<LetGo>(std::move(let_go));
        return [fs, req, ino, file_id, h, kept_for, open_flags, off, size, have, own, load_to,
                closes] {
          FinishRead(fs, req, ino, file_id, h.get(), kept_for, open_flags, off, size, own.get(),
                     have, load_to);
        };
      });
}

void Write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
           fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Write(req, i, buf, size, fi);
  if (fi->fh == 0) return (void)ReplyErr(req, EBADF);  // opened without OPEN: read-only mount
  FileHandle* h = FileOf(fi);
  // The write-back of a shared writable mapping must land at `off`, which O_APPEND on the backing
  // descriptor would ignore (the page would be appended): refuse it rather than corrupt the file.
  if (fi->writepage && h->append) return (void)ReplyErr(req, EIO);
  Status s;
  {
    ChangeDetector::OwnChange change(&fs->changes, i, h->fd);
    if (WriteMustClearSetId(fi->writepage, fuse_req_ctx(req)->uid)) {
      int err = ClearSetId(h->fd, req);
      if (err != 0) return (void)ReplyErr(req, err);
    }
    const uint64_t end_before = change.size_before();
    s = fs->cache->Write(i->file_id, h->backing.get(), static_cast<uint64_t>(off), buf, size);
    if (h->append) {
      // The bytes landed at the end of the file, not at `off`: drop what the engine did not.
      change.DropFrom(std::min<uint64_t>(end_before, static_cast<uint64_t>(off)));
    }
    change.Record(h->fd);
  }
  if (!s.ok()) return (void)ReplyErr(req, s.ToErrno());
  // The kernel keeps the pages it wrote through (an appended write landed elsewhere and was
  // dropped above; a mapping's write-back is of a page already counted when it was read).
  if (!h->append && !fi->writepage) NoteSentToKernel(fs, fi->flags, ino, i->file_id, off, size);
  fuse_reply_write(req, size);
}

void Flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Inode* i = ContextOf(req)->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return (void)ReplyOk(req);
  // A file opened without OPEN (read-only mount): nothing to flush. ENOSYS tells the kernel to
  // send no FLUSH at any later close either.
  if (fi->fh == 0) return (void)ReplyErr(req, ENOSYS);
  // A read-only open with no descriptor of its own (OpenKept): nothing was written through it.
  if (FileOf(fi)->fd < 0) return (void)ReplyOk(req);
  // close() of a duplicate reports deferred write errors (NFS and the like) and drops POSIX
  // locks, as the caller's close() would on the backing file.
  int res = close(dup(FileOf(fi)->fd));
  ReplyResult(req, res);
}

void Fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal || fi->fh == 0) return (void)ReplyOk(req);  // nothing written
  // fsync through a read-only open syncs what other opens wrote (`sync FILE` opens it read-only):
  // one with no descriptor of its own (OpenKept) syncs through the file's read handle.
  int err = 0;
  std::shared_ptr<FileHandle> h = HandleFor(fs, i, fi, &err);
  if (!h) return (void)ReplyErr(req, err);
  int res = datasync ? fdatasync(h->fd) : fsync(h->fd);
  ReplyResult(req, res);
}

void Release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Release(req, i, fi);
  if (fi->fh != 0) DetachHandle(fs, fi);
  ReplyOk(req);
}

void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
               fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return (void)ReplyErr(req, EOPNOTSUPP);
  if (fi->fh == 0) return (void)ReplyErr(req, EBADF);  // opened without OPEN: read-only mount
  FileHandle* h = FileOf(fi);
  ChangeDetector::OwnChange change(&fs->changes, i, h->fd);
  const uint64_t old_size = change.size_before();
  if (fallocate(h->fd, mode, offset, length) != 0) return (void)ReplyErr(req, errno);
  // Punching, zeroing, collapsing or inserting a range changes the bytes from `offset` on; an
  // allocation past the end grows the file, so the page that held the old end (cached short)
  // goes too.
  change.DropFrom(std::min<uint64_t>(old_size, static_cast<uint64_t>(offset)));
  change.Record(h->fd);
  ReplyOk(req);
}

void RetrieveReply(fuse_req_t req, void* cookie, fuse_ino_t /*ino*/, off_t offset,
                   fuse_bufvec* bufv) {
  FsContext* fs = ContextOf(req);
  KernelCache::Run run;
  // The run names its file by the engine's id: the inode number may name another file by now.
  if (fs->kernel != nullptr && fs->kernel->Retrieved(reinterpret_cast<uintptr_t>(cookie), &run)) {
    const size_t size = fuse_buf_size(bufv);
    thread_local std::vector<char> bytes;
    if (bytes.size() < size) bytes.resize(size);
    fuse_bufvec dst = FUSE_BUFVEC_INIT(size);
    dst.buf[0].mem = bytes.data();
    const ssize_t got = fuse_buf_copy(&dst, bufv, static_cast<fuse_buf_copy_flags>(0));
    const uint32_t page = fs->kernel->page_size();
    // Whole pages only: the kernel stops at the first of its own (smaller) pages it no longer
    // holds, so a short page may be a part of one, not the end of the file.
    const bool asked = static_cast<uint64_t>(offset) == run.first_page * page;
    const uint64_t whole = asked && got > 0 ? static_cast<uint64_t>(got) / page : 0;
    for (uint64_t p = 0; p < std::min(whole, run.pages); ++p) {
      fs->cache->Demote(run.file_id, run.first_page + p, bytes.data() + p * page, page, run.epoch);
    }
  }
  fuse_reply_none(req);
}

void Ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void* /*arg*/, fuse_file_info* fi,
           unsigned flags, const void* in_buf, size_t in_bufsz, size_t out_bufsz) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  const bool ours = cmd == kWarmIoctl || cmd == kResidencyIoctl || cmd == kEvictIoctl;
  if (i->kind != NodeKind::kReal || !ours || (flags & FUSE_IOCTL_COMPAT) != 0) {
    return (void)ReplyErr(req, ENOTTY);
  }
  if (in_bufsz != sizeof(WarmRange) || out_bufsz != sizeof(WarmRange)) {
    return (void)ReplyErr(req, EINVAL);
  }
  WarmRange r;
  std::memcpy(&r, in_buf, sizeof(r));
  r.loaded = 0;
  // A file changed underneath is dropped before anything is loaded or counted.
  int err = 0;
  CheckFile(fs, i, fi, &err);
  if (err != 0) return (void)ReplyErr(req, err);
  std::shared_ptr<FileHandle> h = HandleFor(fs, i, fi, &err);
  if (!h) return (void)ReplyErr(req, err);
  if (cmd == kEvictIoctl) {
    const uid_t uid = fuse_req_ctx(req)->uid;
    if (uid != 0 && uid != geteuid()) return (void)ReplyErr(req, EPERM);
    fs->cache->InvalidateFile(i->file_id);
    if (fs->kernel != nullptr) fs->kernel->InvalidateFrom(ino, 0);
  }
  const uint64_t file_id = i->file_id;
  // Loading waits for the store: a request thread stays free for other readers meanwhile.
  auto rest = [fs, req, h, file_id, cmd, r]() mutable {
    uint64_t size = 0;
    Status s = h->backing->Size(&size);
    if (s.ok() && cmd == kWarmIoctl) {
      const uint64_t len = r.length == 0 ? (size > r.offset ? size - r.offset : 0) : r.length;
      s = fs->cache->Warm(file_id, h->backing.get(), r.offset, len, &r.loaded);
    }
    if (!s.ok()) return (void)ReplyErr(req, s.ToErrno());
    FillResidency(fs, file_id, size, &r);
    fuse_reply_ioctl(req, 0, &r, sizeof(r));
  };
  RunMayWait(fs, rest, [&rest] { return rest; });
}

void Lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi) {
  Inode* i = ContextOf(req)->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return ContextOf(req)->control.Lseek(req, i, off, whence, fi);
  int err = 0;
  std::shared_ptr<FileHandle> h = HandleFor(ContextOf(req), i, fi, &err);
  if (!h) return (void)ReplyErr(req, err);
  off_t res = lseek(h->fd, off, whence);
  if (res < 0) return (void)ReplyErr(req, errno);
  fuse_reply_lseek(req, res);
}

}  // namespace ccfs::ops
