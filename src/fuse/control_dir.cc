// The .ccfs directory: see control_dir.h for its files and the control protocol.
#include "fuse/control_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "ccfs/config.h"
#include "fuse/filesystem.h"
#include "config/live_options.h"
#include "fuse/log.h"
#include "fuse/mount_readahead.h"
#include "stats/stats_json.h"

namespace ccfs {

namespace {

// Inode numbers reported for the virtual nodes (chosen to be unlike real ones).
constexpr ino_t kControlDirIno = 0xCCF5000000000001ull;
constexpr ino_t kStatsFileIno = 0xCCF5000000000002ull;
constexpr ino_t kControlFileIno = 0xCCF5000000000003ull;

// Replies with bytes [off, off + size) of `text` from a copy this thread owns: once the kernel has
// the reply, the reader may close and the RELEASE (another request thread) frees `text` while
// fuse_reply_buf's writev is still returning; the sanitizers' writev interceptors look at the
// buffer after the call.
void ReplySlice(fuse_req_t req, const std::string& text, size_t size, off_t off) {
  thread_local std::string reply;
  size_t o = std::min(static_cast<size_t>(off), text.size());
  reply.assign(text, o, std::min(size, text.size() - o));
  fuse_reply_buf(req, reply.data(), reply.size());
}

// What a read of control returns after a write: one line, whatever the message holds.
std::string OutcomeLine(const Status& s) {
  if (s.ok()) return kControlOkReply;
  std::string line = std::string(kControlErrorPrefix) + s.message();
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line + "\n";
}

// `message` with every ASCII control byte as \xNN. The parser escapes and cuts the reader's bytes
// it quotes (util/strings.h's Printable); this keeps a quote it missed from putting a newline or a
// terminal escape into the log or the one-line reply.
std::string WithoutControlBytes(const std::string& message) {
  std::string out;
  for (char c : message) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

ControlDir::ControlDir(PageCache* cache, KernelCache* kernel, const OpenFileWatch* watch,
                       const ThreadCpuGroup* request_cpu, const std::string& dataset,
                       const std::string& mountpoint, double attr_timeout, Pins* pins,
                       const SftpPool* sftp, const ChangeDetector* changes,
                       const PassthroughOpens* passthrough)
    : cache_(cache),
      kernel_(kernel),
      watch_(watch),
      changes_(changes),
      passthrough_(passthrough),
      sftp_(sftp),
      pins_(pins),
      request_cpu_(request_cpu),
      dataset_(dataset),
      mountpoint_(mountpoint),
      attr_timeout_(attr_timeout),
      start_(std::chrono::steady_clock::now()),
      kernel_readahead_(cache->options().kernel_readahead()) {
  dir_.kind = NodeKind::kControlDir;
  dir_.type = S_IFDIR;
  dir_.ino = kControlDirIno;
  control_file_.kind = NodeKind::kControlFile;
  control_file_.type = S_IFREG;
  control_file_.ino = kControlFileIno;
}

// ---- the nodes ----------------------------------------------------------------------------------

Inode* ControlDir::Child(const char* name) {
  if (strcmp(name, kStatsFileName) == 0) {
    auto snapshot = std::make_unique<StatsSnapshot>();
    snapshot->kind = NodeKind::kStatsFile;
    snapshot->type = S_IFREG;
    snapshot->ino = kStatsFileIno;
    snapshot->text = RenderStats();
    snapshot->lookups = 1;
    Inode* v = snapshot.get();
    MutexLock lock(&stats_mu_);
    snapshots_.emplace(v, std::move(snapshot));
    return v;
  }
  if (strcmp(name, kControlFileName) == 0) return &control_file_;
  return nullptr;
}

void ControlDir::Forget(Inode* v, uint64_t nlookup) {
  if (v->kind != NodeKind::kStatsFile) return;
  std::unique_ptr<StatsSnapshot> gone;  // destroyed after `lock`
  MutexLock lock(&stats_mu_);
  auto it = snapshots_.find(v);
  if (it == snapshots_.end()) return;
  uint64_t& lookups = it->second->lookups;
  lookups -= std::min(nlookup, lookups);
  if (lookups > 0) return;
  gone = std::move(it->second);
  snapshots_.erase(it);
}

const std::string& ControlDir::TextOf(const Inode* v) {
  return static_cast<const StatsSnapshot*>(v)->text;
}

void ControlDir::Stat(const Inode* v, struct stat* st) const {
  memset(st, 0, sizeof(*st));
  switch (v->kind) {
    case NodeKind::kReal:  // not ours (REQUIRES); reported as the empty directory below
    case NodeKind::kControlDir:
      st->st_mode = S_IFDIR | 0555;
      st->st_nlink = 2;
      break;
    case NodeKind::kStatsFile:
      st->st_mode = S_IFREG | 0444;
      st->st_nlink = 1;
      st->st_size = static_cast<off_t>(TextOf(v).size());
      break;
    case NodeKind::kControlFile:
      st->st_mode = S_IFREG | 0600;
      st->st_nlink = 1;
      break;
  }
  // Every byte is data: a file with fewer blocks than its size looks sparse, and cp then walks it
  // with SEEK_DATA instead of reading it.
  st->st_blocks = (st->st_size + 511) / 512;
  st->st_ino = v->ino;
  st->st_uid = geteuid();
  st->st_gid = getegid();
  st->st_blksize = 4096;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  st->st_atim = st->st_mtim = st->st_ctim = now;
}

void ControlDir::Entry(Inode* v, fuse_entry_param* e) const {
  memset(e, 0, sizeof(*e));
  Stat(v, &e->attr);
  e->ino = reinterpret_cast<fuse_ino_t>(v);
  // Attributes are asked for each time (control's trip is what MeasureTripUs times); stats.json's
  // name is looked up again at each use, each time a new snapshot.
  e->attr_timeout = 0;
  e->entry_timeout = v->kind == NodeKind::kStatsFile ? 0 : attr_timeout_;
}

size_t ControlDir::open_files() { return controls_.size(); }

// ---- handlers -----------------------------------------------------------------------------------

void ControlDir::Open(fuse_req_t req, Inode* v, fuse_file_info* fi) {
  if (v->kind == NodeKind::kControlDir) return (void)fuse_reply_err(req, EISDIR);
  int mode = fi->flags & O_ACCMODE;
  fi->direct_io = 1;
  fi->keep_cache = 0;
  fi->nonseekable = 0;
  if (v->kind == NodeKind::kStatsFile) {
    if (mode != O_RDONLY) return (void)fuse_reply_err(req, EACCES);
    fi->fh = 0;  // the node holds its snapshot
    fuse_reply_open(req, fi);
    return;
  }
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (mode != O_RDONLY && ctx->uid != 0 && ctx->uid != geteuid()) {
    return (void)fuse_reply_err(req, EACCES);
  }
  fi->fh = controls_.Add(std::make_unique<ControlHandle>());
  if (fuse_reply_open(req, fi) == -ENOENT) controls_.Remove(fi->fh);
}

void ControlDir::Read(fuse_req_t req, Inode* v, size_t size, off_t off, fuse_file_info* fi) {
  if (v->kind == NodeKind::kStatsFile) {
    return ReplySlice(req, TextOf(v), size, off);
  }
  // No handle: opened without OPEN (a read-only mount, where no write can have an outcome).
  if (v->kind != NodeKind::kControlFile || fi->fh == 0) return (void)fuse_reply_buf(req, nullptr, 0);
  ControlHandle* h = OpenHandles<ControlHandle>::Of(fi->fh);
  std::string outcome;
  {
    MutexLock lock(&h->mu);
    outcome = h->outcome;
  }
  ReplySlice(req, outcome, size, off);
}

void ControlDir::Write(fuse_req_t req, Inode* v, const char* buf, size_t size,
                       fuse_file_info* fi) {
  if (v->kind != NodeKind::kControlFile || fi->fh == 0) return (void)fuse_reply_err(req, EBADF);
  Status s = ApplyControlText(std::string(buf, size));
  ControlHandle* h = OpenHandles<ControlHandle>::Of(fi->fh);
  {
    MutexLock lock(&h->mu);
    h->outcome = OutcomeLine(s);
  }
  if (!s.ok()) return (void)fuse_reply_err(req, EINVAL);
  fuse_reply_write(req, size);
}

void ControlDir::Release(fuse_req_t req, Inode* v, fuse_file_info* fi) {
  if (v->kind == NodeKind::kControlFile) controls_.Remove(fi->fh);
  fuse_reply_err(req, 0);
}

void ControlDir::Getattr(fuse_req_t req, Inode* v, fuse_file_info* fi) {
  struct stat st;
  Stat(v, &st);
  fuse_reply_attr(req, &st, 0);
}

void ControlDir::Lseek(fuse_req_t req, Inode* v, off_t off, int whence, fuse_file_info* fi) {
  if (v->kind == NodeKind::kControlDir) return (void)fuse_reply_err(req, EINVAL);
  uint64_t size = 0;
  if (v->kind == NodeKind::kStatsFile) {
    size = TextOf(v).size();
  } else if (fi->fh != 0) {
    ControlHandle* h = OpenHandles<ControlHandle>::Of(fi->fh);
    MutexLock lock(&h->mu);
    size = h->outcome.size();
  }
  // The whole file is data, as generic_file_llseek_size has it for a file with no holes; an
  // offset at or past the end (or negative, taken as unsigned) has neither data nor a hole.
  const uint64_t at = static_cast<uint64_t>(off);
  switch (whence) {
    case SEEK_SET:
      if (off < 0) return (void)fuse_reply_err(req, EINVAL);
      return (void)fuse_reply_lseek(req, off);
    case SEEK_END:
      if (off < -static_cast<off_t>(size)) return (void)fuse_reply_err(req, EINVAL);
      return (void)fuse_reply_lseek(req, static_cast<off_t>(size) + off);
    case SEEK_DATA:
      if (at >= size) return (void)fuse_reply_err(req, ENXIO);
      return (void)fuse_reply_lseek(req, off);
    case SEEK_HOLE:
      if (at >= size) return (void)fuse_reply_err(req, ENXIO);
      return (void)fuse_reply_lseek(req, static_cast<off_t>(size));
    default:
      return (void)fuse_reply_err(req, EINVAL);
  }
}

void ControlDir::Setattr(fuse_req_t req, Inode* v, int valid) {
  // "echo k=v > .ccfs/control" truncates first; nothing else may change a virtual node.
  constexpr int kHarmless = FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
                            FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW |
                            FUSE_SET_ATTR_CTIME;
  if (v->kind != NodeKind::kControlFile || (valid & ~kHarmless) != 0) {
    return (void)fuse_reply_err(req, EPERM);
  }
  struct stat st;
  Stat(v, &st);
  fuse_reply_attr(req, &st, attr_timeout_);
}

void ControlDir::Opendir(fuse_req_t req, Inode* v, fuse_file_info* fi) {
  if (v->kind != NodeKind::kControlDir) return (void)fuse_reply_err(req, ENOTDIR);
  fi->fh = 0;
  fuse_reply_open(req, fi);
}

void ControlDir::Readdir(fuse_req_t req, size_t size, off_t off, ino_t parent_ino, bool plus) {
  std::vector<char> buf(size);
  size_t used = 0;
  struct stat st;
  memset(&st, 0, sizeof(st));
  const char* names[] = {".", "..", kStatsFileName, kControlFileName};
  const mode_t types[] = {S_IFDIR, S_IFDIR, S_IFREG, S_IFREG};
  const ino_t inos[] = {kControlDirIno, parent_ino, kStatsFileIno, kControlFileIno};
  for (off_t k = off; k < 4; ++k) {
    st.st_ino = inos[k];
    st.st_mode = types[k];
    // READDIRPLUS entries with no node (ino 0): the kernel lists them and looks them up itself.
    fuse_entry_param e;
    memset(&e, 0, sizeof(e));
    e.attr = st;
    size_t need = plus ? fuse_add_direntry_plus(req, buf.data() + used, size - used, names[k], &e,
                                                k + 1)
                       : fuse_add_direntry(req, buf.data() + used, size - used, names[k], &st,
                                           k + 1);
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

// ---- settings and stats -------------------------------------------------------------------------

Status ControlDir::Refuse(const std::string& text) {
  const std::string message = WithoutControlBytes(text);
  LogWarning(message);
  return Status::InvalidArgument(message);
}

Status ControlDir::ApplyControlText(const std::string& text) {
  MutexLock lock(&settings_mu_);
  const Options before = cache_->options();
  Options wanted = before;
  const std::string file = fmt::format("{}/{}", kControlDirName, kControlFileName);
  Status s = ccfs::ApplyControlText(text, file, &wanted);
  if (!s.ok()) return Refuse(s.ToString());
  s = pins_->Check(wanted);
  if (!s.ok()) return Refuse(fmt::format("{}: {}", file, s.message()));
  s = cache_->Reconfigure(wanted);
  if (!s.ok()) return Refuse(fmt::format("{}: {}", file, s.ToString()));
  FollowBudget();
  pins_->Apply(wanted);
  for (const std::string& key : ChangedKeys(before, wanted)) {
    LogInfo(fmt::format("{}: {} (was {})", file, DescribeKey(wanted, key), DescribeKey(before, key)));
  }
  return Status::Ok();
}

Status ControlDir::ApplyLiveOptions(const Options& wanted, const std::string& source,
                                    std::vector<std::string>* needs_remount) {
  MutexLock lock(&settings_mu_);
  const Options before = cache_->options();
  for (const std::string& key : ChangedKeys(before, wanted)) {
    if (!IsLiveKey(key)) {
      needs_remount->push_back(key);
      LogWarning(fmt::format("{}: {} needs a remount; still {}", source, DescribeKey(wanted, key),
                             DescribeKey(before, key)));
    }
  }
  Options next = WithLiveKeys(before, wanted);
  std::vector<std::string> changed = ChangedKeys(before, next);
  if (changed.empty()) {
    LogInfo(fmt::format("{}: no live setting changed", source));
    return Status::Ok();
  }
  Status s = pins_->Check(next);
  if (s.ok()) s = cache_->Reconfigure(next);
  if (!s.ok()) {
    LogError(fmt::format("{}: {}", source, s.ToString()));
    return s;
  }
  FollowBudget();
  pins_->Apply(next);
  for (const std::string& key : changed) {
    LogInfo(fmt::format("{}: {} (was {})", source, DescribeKey(next, key), DescribeKey(before, key)));
  }
  return Status::Ok();
}

double ControlDir::MeasureTripUs() const {
  const std::string path = mountpoint_ + "/.ccfs/control";
  std::vector<double> us;
  for (int i = 0; i < kTripProbes; ++i) {
    struct stat st;
    const auto t0 = std::chrono::steady_clock::now();
    if (stat(path.c_str(), &st) != 0) return 0;
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

void ControlDir::SplitApplied() {
  MutexLock lock(&settings_mu_);
  FollowBudget();
}

void ControlDir::FollowBudget() {
  if (kernel_ == nullptr) return;
  const Options o = cache_->options();
  kernel_->SetBudget(o.kernel_budget());
  // The kernel's read-ahead window follows the `readahead` key and the kernel's share in this mode
  // (Options::kernel_readahead, fuse/mount_readahead.h).
  if (o.kernel_readahead() != kernel_readahead_) {
    Status s = SetMountReadahead(mountpoint_, o.kernel_readahead());
    if (s.ok()) {
      kernel_readahead_ = o.kernel_readahead();
    } else {
      LogWarning("readahead: the kernel's read-ahead window is kept: " + s.ToString());
    }
  }
}

CacheStats ControlDir::Stats() const {
  CacheStats s = cache_->Stats();
  if (kernel_ != nullptr) {
    KernelCache::Counts k = kernel_->counts();
    s.kernel_budget_bytes = k.budget_bytes;
    s.kernel_held_bytes = k.held_bytes;
    s.kernel_rerequests = k.rerequests;
    s.kernel_evictions = k.evicted_pages;
    s.kernel_retrieved = k.retrieved_pages;
    s.kernel_kept_out = k.kept_out_pages;
  }
  if (watch_ != nullptr) {
    OpenFileWatch::Counts w = watch_->counts();
    s.kernel_watch_passes = w.passes;
    s.kernel_watch_checks = w.checks;
    s.kernel_watch_changes = w.changes;
    s.kernel_watch_ns = w.ns;
  }
  if (sftp_ != nullptr) {
    const SftpCounts c = sftp_->counts();
    s.sftp_reads = c.reads;
    s.sftp_read_bytes = c.bytes;
    s.sftp_fallbacks = c.fallbacks;
    s.sftp_connects = c.connects;
  }
  s.attr_answers = changes_->attr_answers();
  if (passthrough_ != nullptr) s.passthrough_opens = passthrough_->opens_passed();
  s.cpu_request_threads_ns = request_cpu_->TotalNs();
  return s;
}

std::string ControlDir::RenderStats() const {
  return RenderMountStatsJson(Stats(),
                              DaemonIdentity::Now(dataset_, mountpoint_, start_));
}

std::string ControlDir::StatsLine() const {
  CacheStats s = Stats();
  HistogramSnapshot all = s.all_latency();
  return fmt::format(
      "stats: reads={} hit={:.1f}% raw_hits={} compressed_hits={} misses={} us_per_buffer={:.2f} "
      "p50={:.1f}us p99={:.1f}us raw={} compressed={} ratio={:.2f} evictions={} compressions={} "
      "stalls={}",
      s.reads, 100.0 * s.hit_ratio(), s.raw_hits, s.compressed_hits, s.misses, s.us_per_buffer(),
      all.PercentileUs(0.5), all.PercentileUs(0.99), FormatSize(s.raw_bytes),
      FormatSize(s.compressed_bytes), s.compression_ratio(), s.evictions, s.compressions,
      s.stalls);
}

}  // namespace ccfs
