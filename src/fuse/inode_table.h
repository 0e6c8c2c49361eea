// InodeTable: the inodes the kernel may name, each found again by its name under its parent, with
// a bounded cache of descriptors; counted by lookups.
//
// 1. Names, not descriptors. A fuse_ino_t is the address of an Inode (FUSE_ROOT_ID names the
//    dataset's root), keyed by the backing (st_dev, st_ino). An Inode records where it was last
//    found: its parent Inode and its name there. It holds a descriptor only while one is cached:
//    a tree of any size can be named by the kernel while the daemon holds at most `max_open`
//    descriptors of inodes not in use (plus those of files open and of handlers at work). A
//    lookup opens nothing (a statx of the name under its parent's descriptor): a walk that only
//    lists and stats a tree opens its directories, not its files.
//
// 2. Borrowing. Every op works through a descriptor lent by Borrow (an InodeFd): the cached one,
//    or one opened again by walking the names up to a cached ancestor or the root. A lent
//    descriptor stays open until given back, whatever the cache does meanwhile. Nothing is ever
//    looked up by a path from the root and the daemon never follows a symlink (lookups and
//    re-opens use O_NOFOLLOW; data files are opened through /proc/self/fd only once known to be
//    regular files).
//
// 3. The same file, or none. A name re-opened may name another file now (renamed, removed or
//    replaced underneath). The descriptor is kept only if its (st_dev, st_ino), its type and, where
//    the store gives one, its birth time match the Inode's; otherwise the op gets ESTALE, which
//    makes the kernel look the path up afresh (a new Inode for the new file). A number reused by
//    the store for a new file under the old name is caught by the birth time; on a store without
//    birth times (sshfs, GlusterFS) the new file's signature (change_detector.h) differs, so no
//    page of the old file is served for it.
//
// 4. The cache. Descriptors of Inodes not in use sit in an LRU list, closed oldest first beyond
//    `max_open`. Never closed while lent, while the file is open (FileHandles; getattr and the
//    change detector of an open file use it), or while the Inode has no name to be opened again
//    by (its name was removed through the mount while it still has a link or is open). The
//    kernel's lookups of a name already known give the Inode that name (a rename underneath, a
//    second link). When an open fails for want of descriptors, Shed closes every idle one and the
//    open is tried once more; failures are counted and logged once per interval.
//
// 5. Lifetimes. Every LOOKUP that answers with an Inode counts one reference; the kernel's FORGET
//    gives them back (Unref). An Inode is also held by each Inode that names it as parent. It goes
//    when neither is left, and lets go of its parent then.
//
// The table also keeps the signatures (change_detector.h) of the files whose Inodes the kernel
// forgot, and gives each back to the next Inode of the same file id. With persist (KeepPaths) it
// keeps a path to each such file too, so that the cache file can name every file it has pages
// of (fuse/persister.h): DescribeFiles says what the table records of the files, and
// AdoptSignature records, for a file with no record yet, the signature its pages were saved with.
//
// A store whose client died and was mounted again at the same path (sshfs killed and restarted, a
// GlusterFS client remounted) leaves every cached descriptor on the dead mount, answering ENOTCONN.
// RecoverRoot opens DATASET's path again for the root and drops the idle cached descriptors;
// Inodes of the dead mount fail (ESTALE: another device) until the kernel forgets them. File ids
// change with it (a generation is mixed in), so pages cached of the dead mount's files are never
// taken for the new mount's, which may give the same inode numbers to other files.
//
// A regular file whose last link is removed through the mount (unlink, or rename over it) gives
// its space back at once, not when the kernel's FORGET comes: LastLinkGone closes the Inode's
// descriptor when nothing has it open or borrowed, else the last HandleClosed or return does.
//
// The virtual nodes of the .ccfs directory are Inodes too (kind != kReal); ControlDir owns them
// and the table never counts or frees them.
//
// Ownership: the table owns the root Inode and every Inode it inserted, and with them their
// descriptors. Destroy the table only once no handler can run (Filesystem's contract).
//
// Thread-safety: every method may run on any number of request threads at once. One mutex guards
// the map, the counts, names, cached descriptors and the saved signatures; no system call that
// may reach the store is made under it. Lock order: the table's mutex, then an Inode's sig_mu,
// never the reverse.
#ifndef CCFS_FUSE_INODE_TABLE_H_
#define CCFS_FUSE_INODE_TABLE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ccfs/status.h"
#include "fuse/fuse_api.h"
#include "util/mutex.h"

namespace ccfs {

// What identifies one version of a file's contents.
struct FileSignature {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileSignature&) const = default;
};

// A file's attributes as last read from the store through a descriptor, kept compact (every Inode
// holds one) with when they were read: what the daemon answers the kernel's attribute refresh
// from for attr_timeout (ChangeDetector::RecentAttributes). The device and inode number are the
// Inode's own.
struct AttrRecord {
  int64_t read_ns = 0;  // steady ns when the statx began; 0: nothing recorded
  uint64_t epoch = 0;   // ChangeDetector's count of changes through the mount then
  uint64_t size = 0;
  uint64_t blocks = 0;
  uint64_t rdev = 0;
  int64_t atime_s = 0, mtime_s = 0, ctime_s = 0;
  uint32_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0;
  uint32_t mode = 0, nlink = 0, uid = 0, gid = 0, blksize = 0;
};

FileSignature SignatureOf(const struct stat& st);
FileSignature SignatureOf(const struct statx& stx);  // the same three fields of a statx

// The attributes of what `fd` (an open or an O_PATH descriptor) names, never following a symlink:
// 0, or an errno. The atime is the store client's cached one (see StatxFlags in the .cc).
int StatOfFd(int fd, struct stat* st);
// The same fields (a statx, the atime not asked for) of `name` under the directory `dir_fd`, never
// following a symlink or an automount: 0, or an errno.
int StatxAt(int dir_fd, const char* name, struct statx* stx);

enum class NodeKind { kReal, kControlDir, kStatsFile, kControlFile };

// An Inode's key in the table: its backing (st_dev, st_ino).
using InodeKey = std::pair<dev_t, ino_t>;

// The two orders a directory's files are read in one after another (fuse/listing_walk.h): the
// order its listing gave (tar, grep -r, cp -r, find), and that of the names' bytes (`ls` in the C
// locale, a shell's `*` in C.UTF-8, Python's sorted(), rsync).
enum ListingOrder { kListedOrder = 0, kNameOrder = 1, kListingOrders = 2 };

struct Inode {
  Inode() = default;
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;
  ~Inode();

  NodeKind kind = NodeKind::kReal;
  dev_t dev = 0;  // not set for the root: InodeTable keeps the root's (RootIno)
  ino_t ino = 0;
  mode_t type = 0;       // S_IFMT bits
  int64_t btime_ns = 0;  // birth time, when the store gives one; 0 = unknown
  uint64_t file_id = 0;  // the engine's name for the file
  // Unique among the Inodes the table ever made, where an address may be reused once an Inode is
  // freed: what a cache keyed by Inode checks (read_handles.h). 0 for the table's root and the
  // .ccfs nodes.
  uint64_t serial = 0;
  // The Pins generation this file was last matched against `pin` at (fuse/pins.h); 0 = never.
  std::atomic<uint64_t> pin_generation{0};
  // An open of it was passed through (fuse/passthrough.h): its later opens are served by the tiers.
  std::atomic<bool> passed_through{false};

  // Guarded by the InodeTable's mutex (its thread-safety annotations cannot name it from here).
  uint64_t nlookup = 0;
  uint64_t holds = 0;        // Inodes naming this one as parent, and walks passing through
  Inode* parent = nullptr;   // where `name` is; holds one `holds` of it. Null for the root
  std::string name;
  bool named = true;         // false: its name was removed through the mount
  int fd = -1;               // the cached O_PATH descriptor, or -1
  int borrowed = 0;          // InodeFds lent out of fd
  int open_handles = 0;      // FileHandles open on the file
  bool unlinked = false;     // its last link is gone: fd closes once nothing uses it
  bool in_lru = false;
  std::list<Inode*>::iterator lru_pos;

  // The entry after this one in the kernel's last READDIRPLUS of its directory, in each
  // ListingOrder, by key (ino 0: none known), and this one's size as listed: what a walk of the
  // directory in that order reads next (fuse/listing_walk.h). Guarded by the InodeTable's mutex.
  InodeKey next[kListingOrders]{};
  uint64_t listed_size = 0;
  // A directory: when its listing was last read from the store (steady ns; 0: never), the listing
  // the kernel may keep (cache_readdir), and that listing's first entry in each order (ino 0: none
  // known). Guarded by the InodeTable's mutex.
  int64_t listing_ns = 0;
  InodeKey listing_first[kListingOrders]{};

  // Last signature seen of the backing file (see ChangeDetector).
  Mutex sig_mu;  // after InodeTable::mu_ when both are held
  bool sig_known GUARDED_BY(sig_mu) = false;
  FileSignature sig GUARDED_BY(sig_mu);
  AttrRecord attr GUARDED_BY(sig_mu);
};

class InodeTable;

inline InodeKey KeyOf(const Inode& i) { return {i.dev, i.ino}; }

struct InodeKeyHash {
  size_t operator()(const InodeKey& k) const {
    // Inode numbers of one device differ in their low bits; the device is mixed in for stores
    // that span devices (a mount point inside the dataset).
    return std::hash<uint64_t>()(static_cast<uint64_t>(k.second) ^
                                 (static_cast<uint64_t>(k.first) * 0x9e3779b97f4a7c15ULL));
  }
};

// A descriptor of an Inode's backing inode (O_PATH), lent for one handler's use: open until this
// goes. Empty (get() == -1) with error() the errno when none could be had.
class InodeFd {
 public:
  InodeFd() = default;
  InodeFd(InodeFd&& other) noexcept { *this = std::move(other); }
  InodeFd& operator=(InodeFd&& other) noexcept;
  InodeFd(const InodeFd&) = delete;
  InodeFd& operator=(const InodeFd&) = delete;
  ~InodeFd() { Reset(); }

  int get() const { return fd_; }
  int error() const { return err_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  friend class InodeTable;
  InodeFd(InodeTable* table, Inode* inode, int fd) : table_(table), inode_(inode), fd_(fd) {}
  explicit InodeFd(int err) : err_(err) {}
  void Reset();

  InodeTable* table_ = nullptr;  // null: not counted (the root's, or empty)
  Inode* inode_ = nullptr;
  int fd_ = -1;
  int err_ = 0;
};

class InodeTable {
 public:
  InodeTable() = default;
  ~InodeTable();
  InodeTable(const InodeTable&) = delete;
  InodeTable& operator=(const InodeTable&) = delete;

  // Opens the dataset directory as the root; at most `max_open` descriptors of Inodes not in use
  // are kept (>= 1). `before_free` (may be empty) is called with an Inode's ino when it is freed,
  // while no LOOKUP can yet reuse its address as a new ino. Errors name the path.
  Status Open(const std::string& dataset, size_t max_open,
              std::function<void(fuse_ino_t)> before_free = nullptr);

  Inode* root() { return &root_; }
  // The backing inode number of the root in use.
  ino_t RootIno() const { return root_ino_.load(std::memory_order_acquire); }

  // After an op through the root failed with `err`: if the root's descriptor is dead (the store's
  // client went away) and DATASET's path now names a live directory (it came back), the root is
  // opened again there. Returns true when the root is usable now (then retry the op once).
  bool RecoverRoot(int err);

  // The Inode the kernel's number names, and back.
  Inode* Get(fuse_ino_t ino) { return ino == FUSE_ROOT_ID ? &root_ : reinterpret_cast<Inode*>(ino); }
  // The path of `i` relative to DATASET by the names the table knows ("" for the root); false
  // when some Inode on the way has no name (removed through the mount).
  bool PathOf(Inode* i, std::string* path) EXCLUDES(mu_);
  fuse_ino_t InoOf(Inode* i) const {
    return i == &root_ ? FUSE_ROOT_ID : reinterpret_cast<fuse_ino_t>(i);
  }

  // A descriptor of the real Inode `i` (see InodeFd): cached, or opened again by name. ESTALE when
  // the name now names another file or none; EMFILE/ENFILE when descriptors ran out even after
  // the idle ones were closed.
  InodeFd Borrow(Inode* i);

  // Looks `name` up in the real directory `parent` without following a symlink, fills *st, and
  // counts one kernel reference to the result, *found, which now has that name. ".." of the root
  // is the root (never above the dataset). Returns 0 or the errno.
  int Lookup(Inode* parent, const char* name, struct stat* st, Inode** found);

  // Gives back `n` kernel references to `i`; when the last is gone and nothing else counts it
  // (inode_table.h, 5), it is freed (its signature is kept) and true returned. Virtual nodes and
  // the root are never freed.
  bool Unref(Inode* i, uint64_t n);

  // The file `id` names is gone for good (its last link was removed): forget its kept signature.
  void ForgetSignature(uint64_t id);

  // `name` in `parent` was renamed to `new_name` in `new_parent` through the mount; `st` is what
  // the name named. The Inode of it, if known by that name, is known by the new one.
  void Renamed(Inode* parent, const std::string& name, Inode* new_parent,
               const std::string& new_name, const struct stat& st);
  // A link `name` in `parent` to what `st` describes was removed through the mount. If it was the
  // name its Inode is known by, the Inode keeps its descriptor (if cached) and has no name to be
  // opened again by until a LOOKUP finds it. If the file is regular and has no link left, its
  // descriptor is let go now, or when nothing has it open or borrowed any more.
  // Returns the Inode when the file's last link went, else null (a key only: it may be freed by
  // the time the caller looks at it).
  const Inode* LinkRemoved(Inode* parent, const std::string& name, const struct stat& st);
  // A FileHandle of `i` was opened (its descriptor `fd`), or closed.
  void HandleOpened(Inode* i, int fd);
  void HandleClosed(Inode* i);
  // The real files open now (a FileHandle on them), each with its descriptor lent: the Inode lives
  // at least as long as its InodeFd. One pass under the mutex over the open files alone.
  std::vector<std::pair<Inode*, InodeFd>> BorrowOpenFiles();

  // Closes every cached descriptor not in use (after an open failed with EMFILE/ENFILE), counts
  // the failure `err` and logs the count once per interval. Returns true if any was closed.
  bool Shed(int err);

  // The engine's name for the file `st` describes.
  uint64_t FileIdOf(const struct stat& st) const;

  // ---- listings (fuse/listing_walk.h) ----
  // A READDIRPLUS listed `cur` (`size` bytes) right after the entry known by `prev` (ino 0: `cur`
  // came first, or the one before it is not known).
  void NoteListed(InodeKey prev, Inode* cur, uint64_t size);
  // A whole listing's entries, by key, in the order of their names.
  void NoteNameOrder(const std::vector<InodeKey>& keys);
  // The keys of the entries after `i`, in each order (ino 0: none known).
  std::array<InodeKey, kListingOrders> NextOf(Inode* i);
  // The regular files a walk reads after `i` in each order (ino 0: none known): the first one
  // after it in its directory's listing, into the listings known of the directories between, and
  // past the listing's end on after its directory in the listing above it (as find, tar and
  // grep -r go; at most kMaxLookedNext entries looked at). *parent: the key of the directory `i`
  // was last found in ({0, 0}: none).
  static constexpr size_t kMaxLookedNext = 64;
  std::array<InodeKey, kListingOrders> NextFilesOf(Inode* i, InodeKey* parent);
  // Whether directory `dir` comes in turn in `order` for a walk after entry `entry` of directory
  // `walk_dir` ({0, 0}: at walk_dir's start): it is the first directory after that entry in
  // walk_dir's listing (a walk going down, as tar and grep -r do), or the first after walk_dir,
  // or after one of its parents (at most kInTurnLevels up), in the listing of the directory
  // above it (a walk going on once a directory is done). At most kMaxLooked entries are looked
  // at in each listing. One pass under the mutex.
  static constexpr int kInTurnLevels = 4;
  static constexpr size_t kMaxLooked = 4096;
  bool InTurn(InodeKey dir, InodeKey walk_dir, InodeKey entry, ListingOrder order);
  // Directory `dir`'s listing is about to be read from the store: its first entries in each order
  // are not known until NoteListingFirsts.
  void ForgetListingFirsts(Inode* dir);
  // Directory `dir`'s listing is read from the store from `now_ns` on (its entries are at least as
  // new as that).
  void NoteListingRead(Inode* dir, int64_t now_ns);
  // A listing of `dir` read from its start has ended: its first entries in each order.
  void NoteListingFirsts(Inode* dir, const std::array<InodeKey, kListingOrders>& firsts);
  // Whether the kernel may serve `dir`'s listing from its cache at `now_ns`: one was read from the
  // store less than `max_age_ns` ago. *firsts then has its first entries.
  bool ListingFresh(Inode* dir, int64_t now_ns, int64_t max_age_ns,
                    std::array<InodeKey, kListingOrders>* firsts);
  struct ListedFile {
    InodeKey key;
    uint64_t file_id = 0;
    uint64_t size = 0;  // as listed
  };
  // The regular files from the entry known by `from` on (it included) in `order`, into known
  // listings and on past their ends as NextFilesOf goes: up to `max_files` of them, each at most
  // `max_size` bytes as listed and together at most `max_bytes`; other entries are passed over (at
  // most 2 * max_files entries are looked at). One pass under the mutex.
  std::vector<ListedFile> ListedFrom(InodeKey from, ListingOrder order, size_t max_files,
                                     uint64_t max_size, uint64_t max_bytes);
  // The directories from the entry known by `from` on (it included) in `order`: up to `max_dirs`
  // of them, among at most `max_looked` entries. One pass under the mutex.
  std::vector<InodeKey> ListedDirsFrom(InodeKey from, ListingOrder order, size_t max_dirs,
                                       size_t max_looked);
  // A descriptor of the file of type `type` (S_IFREG, S_IFDIR) the table knows by `key`, lent as
  // Borrow's, with *found its Inode (which lives at least as long as the descriptor). Empty
  // (ENOENT) when the table knows no such file by that key. *opened (if given): the file's
  // signature when its descriptor was opened now, read by the statx that checked it is the same
  // file (ChangeDetector::CheckSignature takes it); empty when the descriptor was open already.
  InodeFd BorrowKnown(InodeKey key, Inode** found, mode_t type = S_IFREG,
                      std::optional<FileSignature>* opened = nullptr);

  // ---- persistence (fuse/persister.h) ----
  // From now on a file's path is kept with its signature when its Inode is freed (paths cost
  // memory: only with persist). Call before any handler runs.
  void KeepPaths();
  // What the table records of a file: its signature and a path to it relative to DATASET.
  struct FileRecord {
    uint64_t file_id = 0;
    FileSignature sig;
    std::string path;
  };
  // Appends to *out the record of each file id of `ids` whose signature and path are both known
  // (from its Inodes, which must agree, or kept since its Inode was freed). One pass over the
  // table under its mutex.
  void DescribeFiles(const std::vector<uint64_t>& ids, std::vector<FileRecord>* out);
  // `st` (a stat of the file at `path` now) describes the file a cache file saved pages of with
  // signature `sig`. Records `sig` as the file's signature where nothing is recorded yet (an
  // Inode of it that knows none, or no Inode and none kept, then with `path`), so that the check
  // before each read compares the file with the signature the pages were saved with. Returns
  // true when what is recorded now is `sig` everywhere.
  bool AdoptSignature(const struct stat& st, const FileSignature& sig, const std::string& path);
  // fstatat of `path`, relative to DATASET, not following a symlink at its end: 0 or the errno.
  int StatPath(const std::string& path, struct stat* st);

  // Descriptors the table holds now (cached and in use).
  size_t open_descriptors();

 private:
  friend class InodeFd;

  // Called by ~InodeFd.
  void Return(Inode* i);
  // Keeps `fd` (O_PATH, of i's file) as i's descriptor, or queues it in *to_close if i has one.
  // Returns the descriptor i has now.
  int Adopt(Inode* i, int fd, std::vector<int>* to_close) REQUIRES(mu_);
  InodeFd BorrowAt(Inode* i, int depth);
  // The Inode the table knows by `key`, the root's included, or null.
  const Inode* FindLocked(InodeKey key) const REQUIRES(mu_);
  // Calls take(key, inode) for the entries from the one known by `from` on (it included) in
  // `order`, at most `max_looked` of them, until take returns false, the listing loops back to
  // `from` or an entry is not known (forgotten: the listing is not known past it). `across`: into
  // the listing of a directory passed when it is known (its first entry known), and from the end
  // of a listing on after its directory in the listing above it, up to the root's; else the end of
  // the listing `from` is in ends the walk.
  template <typename Take>
  void WalkListingLocked(InodeKey from, ListingOrder order, size_t max_looked, bool across,
                         Take take) REQUIRES(mu_);
  // Whether the first directory in `order` from the entry known by `from` on (it included) is
  // `dir`, within that entry's listing (InTurn).
  bool FirstDirIsLocked(InodeKey from, InodeKey dir, ListingOrder order) REQUIRES(mu_);
  // i's key, the root's included ({0, 0} for null).
  InodeKey KeyLocked(const Inode* i) const REQUIRES(mu_);
  // The Inode of the file `st` describes, found as `name` under `parent`: the one the table has,
  // given that name, or a new one with no descriptor (Borrow opens one when an op needs it).
  Inode* FindOrInsert(Inode* parent, const char* name, const struct stat& st, int64_t btime_ns);
  void SetNameLocked(Inode* i, Inode* parent, const std::string& name) REQUIRES(mu_);
  // Frees i if nothing counts it any more, and its parents that this leaves uncounted. Returns
  // true if i was freed.
  bool MaybeFreeLocked(Inode* i, std::vector<int>* to_close) REQUIRES(mu_);
  // After a count of i went down (a borrow given back, a handle closed): its descriptor idles or
  // closes, i is freed if nothing counts it, and the cache is trimmed to its bound.
  void SettleLocked(Inode* i, std::vector<int>* to_close) REQUIRES(mu_);
  // Puts i's descriptor in the LRU list, or closes it, as its state says.
  void IdleLocked(Inode* i, std::vector<int>* to_close) REQUIRES(mu_);
  // Puts i's descriptor in the LRU list if it has one nothing uses and i has a name to open it by.
  void LruAddLocked(Inode* i) REQUIRES(mu_);
  void LruRemoveLocked(Inode* i) REQUIRES(mu_);
  void CloseFdLocked(Inode* i, std::vector<int>* to_close) REQUIRES(mu_);
  // Closes the oldest idle descriptors beyond `keep`.
  void TrimLocked(size_t keep, std::vector<int>* to_close) REQUIRES(mu_);
  // Opens `i` again through its parent (recursively; `depth` walks so far): the descriptor, lent,
  // or -errno. *opened (if given) as BorrowKnown's.
  int Reopen(Inode* i, int depth, std::optional<FileSignature>* opened = nullptr);
  // i's path relative to DATASET by the names it is known by ("" for the root), or false when an
  // Inode on the way has no name.
  bool PathLocked(const Inode* i, std::string* path) const REQUIRES(mu_);

  Inode root_;  // written by Open before any handler runs
  std::atomic<int> root_fd_{-1};  // replaced by RecoverRoot; those replaced close with the table
  std::string dataset_;
  size_t max_open_ = 1;
  std::function<void(fuse_ino_t)> before_free_;
  std::atomic<dev_t> root_dev_{0};
  std::atomic<ino_t> root_ino_{0};
  std::atomic<uint64_t> generation_{0};  // roots opened again
  // steady_clock ns before which RecoverRoot does not try again after a try found the store
  // still gone: during an outage every root op fails, and each would otherwise queue on
  // recover_mu_ behind the open and stat of a store that may hang.
  std::atomic<int64_t> recover_after_ns_{0};

  Mutex recover_mu_;  // one recovery at a time; before mu_
  std::vector<int> dead_root_fds_ GUARDED_BY(mu_);  // closed with the table

  // Lock order: mu_, then an Inode's sig_mu (Unref keeps a signature), then what Unref's before_free
  // takes (the kernel ledger's mutex).
  Mutex mu_;
  std::unordered_map<InodeKey, std::unique_ptr<Inode>, InodeKeyHash> table_ GUARDED_BY(mu_);
  // Inodes whose number the store gave to a new file while the kernel still names them.
  std::unordered_map<Inode*, std::unique_ptr<Inode>> orphans_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, FileSignature> saved_signatures_ GUARDED_BY(mu_);
  // KeepPaths: the path of each file of saved_signatures_ that had one when its Inode was freed.
  bool keep_paths_ GUARDED_BY(mu_) = false;
  std::unordered_map<uint64_t, std::string> saved_paths_ GUARDED_BY(mu_);
  std::list<Inode*> lru_ GUARDED_BY(mu_);  // idle cached descriptors, newest first
  std::unordered_set<Inode*> open_ GUARDED_BY(mu_);  // Inodes with open_handles > 0
  uint64_t serials_ GUARDED_BY(mu_) = 0;  // the last Inode::serial given
  size_t fds_ GUARDED_BY(mu_) = 0;         // descriptors the Inodes hold (idle or in use)
  // Opens refused for want of descriptors since the last log line, and when that was.
  uint64_t shortages_ GUARDED_BY(mu_) = 0;
  int64_t shortage_logged_ns_ GUARDED_BY(mu_) = 0;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_INODE_TABLE_H_
