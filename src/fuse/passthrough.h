// Passthrough: which open files the kernel reads and writes itself, straight from the store's file
// (FUSE passthrough, Linux 6.9+: the `passthrough` key, raw_tier = kernel).
//
// A file whose reads reach the daemon streams at most at the speed of one FUSE trip per request
// (a cold 1 GiB `cat` at 0.2-0.8x the page cache's: results/kernel-passthrough-floor); one passed
// through streams at the page cache's. The tiers gain nothing from it, so only an open of a file
// the tiers hold none of, and that no open of this Inode's life has passed through before, starts
// to be passed through (`may_start`): the file's next open after its passed-through ones are
// released is served as today (cached), its misses read from the store's file, whose pages the
// passed-through reads just left in the page cache, and the tiers fill then.
//
// The kernel's rule (fs/fuse/iomode.c): while one open of an inode is passed through, every other
// open of it must be passed through to the same registered file, and while one is cached none may
// be passed through; either mistake fails the open with EIO. Open() keeps that rule per Inode: a
// cached open of the file outstanding makes the next one cached, a passed-through one makes the
// next one passed through, whatever its access mode. The kernel ends an open's mode before the
// daemon gets its RELEASE, so the daemon's count lags behind the kernel's, never ahead: the next
// open then takes the mode the kernel no longer requires, which it also allows.
//
// A write through a passed-through open reaches the store unseen by the daemon. Once the last
// passed-through open of a file that a writable open was passed through is released, Release()
// says so, and the caller drops what the tiers and the kernel hold of the file (pages a walk's
// prefetch may have loaded meanwhile).
//
// Ownership: the kernel holds the file each registered id names until UnregisterBacking; ids are
// dropped with the file's last passed-through open. Keyed by Inode: the kernel holds an Inode
// (a lookup reference) for as long as it has the file open. Thread-safety: every method may run
// on any thread at once; one leaf mutex, and no file is opened or registered under it.
#ifndef CCFS_FUSE_PASSTHROUGH_H_
#define CCFS_FUSE_PASSTHROUGH_H_

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "util/mutex.h"

namespace ccfs {

struct Inode;

class PassthroughOpens {
 public:
  PassthroughOpens() = default;
  PassthroughOpens(const PassthroughOpens&) = delete;
  PassthroughOpens& operator=(const PassthroughOpens&) = delete;

  // The mode of an OPEN (or CREATE) of `i`, counted until Release: passed through to the
  // registered file `id` (> 0), or cached (0). `may_start`: the file may begin to be passed
  // through (above). `writable`: the open may write. `open_file` opens the store's file for
  // registering: a descriptor (closed here), or -1 with errno set (the open is then cached).
  int32_t Open(const Inode* i, bool may_start, bool writable,
               const std::function<int()>& open_file);

  // Ends an open that Open counted with `id`. True when it was the last passed-through open of a
  // file that a writable open was passed through (above).
  bool Release(const Inode* i, int32_t id);

  uint64_t opens_passed() const;  // opens passed through so far

 private:
  struct File {
    int32_t id = 0;       // the registered file while `passed` > 0
    int passed = 0;       // opens passed through to `id`
    int cached = 0;       // opens served by the daemon
    bool written = false;  // a writable open was passed through to `id`
  };
  // The kernel refused a registration: logged once; EPERM (no CAP_SYS_ADMIN) stops every later try.
  void Refused(int err) REQUIRES(mu_);

  mutable Mutex mu_;
  std::unordered_map<const Inode*, File> files_ GUARDED_BY(mu_);
  bool logged_ GUARDED_BY(mu_) = false;
  bool refused_ GUARDED_BY(mu_) = false;
  uint64_t opens_passed_ GUARDED_BY(mu_) = 0;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_PASSTHROUGH_H_
