// SFTP page reads (see sftp_store.h): libssh sessions, one SFTP channel each, pipelined reads.
#include "backing/sftp_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "util/mutex.h"

namespace ccfs {

namespace {

using Clock = std::chrono::steady_clock;

// The most one SFTP read asks for. OpenSSH's server answers at most 256 KiB less a header per
// read; 64 KiB is what sshfs asks for, and a run of pages is sent as many reads at once anyway.
constexpr uint32_t kChunk = 64 << 10;
// How long a lost connection is left before it is made again (reads go through the mount
// meanwhile), and how long connecting and each answer may take.
constexpr auto kRetryAfter = std::chrono::seconds(1);
constexpr long kTimeoutSeconds = 10;
// The most connections (a bit each in File::on_).
constexpr int kMaxConnections = 64;
// A file's reads that go through the mount before it is opened over SFTP (File::ReadPages).
constexpr uint64_t kThroughMountFirst = 2;

}  // namespace

// ---- connections ----------------------------------------------------------------------------------

struct SftpPool::Connection {
  explicit Connection(int index) : index(index) {}
  ~Connection() {
    MutexLock lock(&mu);
    Drop();
  }

  // Closes the files open over this connection and the session. The files' handles on it are
  // gone with it: a file finds none here afterwards and opens its file again.
  void Drop() REQUIRES(mu) {
    for (auto& [file, handle] : open) sftp_close(handle);
    open.clear();
    if (sftp != nullptr) sftp_free(sftp);
    sftp = nullptr;
    if (ssh != nullptr) {
      ssh_disconnect(ssh);
      ssh_free(ssh);
    }
    ssh = nullptr;
  }

  // After a failed call: if the session is not usable any more, drops it and lets the next read
  // make it again. Returns libssh's reason.
  std::string Failed(const std::string& what) REQUIRES(mu) {
    std::string why = what + ": " + (ssh != nullptr ? ssh_get_error(ssh) : "no session");
    if (sftp != nullptr) why += SftpStatus();
    if (ssh != nullptr && (!ssh_is_connected(ssh) || ssh_get_error_code(ssh) == SSH_FATAL)) {
      Reset();
    }
    return why;
  }
  // After a read that left answers unread: the session's stream is past use, so it is dropped
  // and made again at the next read.
  void Reset() REQUIRES(mu) {
    if (ssh == nullptr) return;
    Drop();
    retry_at = Clock::now();
  }
  std::string SftpStatus() REQUIRES(mu) {
    const int code = sftp_get_error(sftp);
    return code == SSH_FX_OK ? "" : " (SFTP status " + std::to_string(code) + ")";
  }

  const int index;
  Mutex mu;
  ssh_session ssh GUARDED_BY(mu) = nullptr;
  sftp_session sftp GUARDED_BY(mu) = nullptr;
  // The files opened over this connection, by the File that opened them.
  std::unordered_map<const void*, sftp_file> open GUARDED_BY(mu);
  Clock::time_point retry_at GUARDED_BY(mu);
};

namespace {

// Connects `ssh` (made, options set) and opens SFTP on it; "" or why not.
std::string ConnectSession(ssh_session ssh, sftp_session* sftp) {
  if (ssh_connect(ssh) != SSH_OK) return std::string("connect: ") + ssh_get_error(ssh);
  switch (ssh_session_is_known_server(ssh)) {
    case SSH_KNOWN_HOSTS_OK:
      break;
    case SSH_KNOWN_HOSTS_CHANGED:
      return "the server's host key is not the one its known hosts file has for it "
             "(it changed, or another machine answers)";
    case SSH_KNOWN_HOSTS_OTHER:
      return "the known hosts file has a key of another type for this server";
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
      return "the server's host key is not in the known hosts files (connect once with ssh, or "
             "name the file with UserKnownHostsFile in ssh_config): it is never trusted unseen";
    default:
      return std::string("cannot check the server's host key: ") + ssh_get_error(ssh);
  }
  if (ssh_userauth_publickey_auto(ssh, nullptr, nullptr) != SSH_AUTH_SUCCESS) {
    return "the server accepted none of the keys (the agent's, IdentityFile, ~/.ssh/id_*): " +
           std::string(ssh_get_error(ssh));
  }
  *sftp = sftp_new(ssh);
  if (*sftp == nullptr) return std::string("sftp: ") + ssh_get_error(ssh);
  if (sftp_init(*sftp) != SSH_OK) {
    sftp_free(*sftp);
    *sftp = nullptr;
    return std::string("sftp: ") + ssh_get_error(ssh);
  }
  return "";
}

// A session for `t` with its options set; "" or why not.
std::string NewSession(const SftpTarget& t, ssh_session* out) {
  ssh_session ssh = ssh_new();
  if (ssh == nullptr) return "out of memory";
  auto fail = [&](const std::string& why) {
    ssh_free(ssh);
    return why;
  };
  // libssh's own log goes to stderr (the daemon's log before it detaches): its warnings are about
  // messages it skips, not failures; failures are reported through ssh_get_error.
  const int quiet = SSH_LOG_NOLOG;
  ssh_options_set(ssh, SSH_OPTIONS_LOG_VERBOSITY, &quiet);
  if (ssh_options_set(ssh, SSH_OPTIONS_HOST, t.host.c_str()) != SSH_OK) {
    return fail("host " + t.host + ": " + ssh_get_error(ssh));
  }
  // Named file: read now (then libssh reads no other); none: ssh_connect reads ~/.ssh/config and
  // /etc/ssh/ssh_config, as ssh does.
  if (!t.ssh_config.empty() && ssh_options_parse_config(ssh, t.ssh_config.c_str()) != SSH_OK) {
    return fail("ssh_config " + t.ssh_config + ": " + ssh_get_error(ssh));
  }
  // What the target names itself outranks the configuration, as on ssh's command line.
  if (!t.user.empty()) ssh_options_set(ssh, SSH_OPTIONS_USER, t.user.c_str());
  if (t.port != 0) ssh_options_set(ssh, SSH_OPTIONS_PORT, &t.port);
  // libssh leaves Nagle's algorithm on: a small request then waits for the ACK of the one before
  // (40 ms of delayed ACK now and then). OpenSSH, under sshfs, sets TCP_NODELAY.
  const int nodelay = 1;
  ssh_options_set(ssh, SSH_OPTIONS_NODELAY, &nodelay);
  const long timeout = kTimeoutSeconds;
  ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT, &timeout);
  *out = ssh;
  return "";
}

// Makes `c`'s session; "" or why not.
std::string Connect(const SftpTarget& t, ssh_session* ssh, sftp_session* sftp) {
  std::string why = NewSession(t, ssh);
  if (!why.empty()) return why;
  why = ConnectSession(*ssh, sftp);
  if (!why.empty()) {
    ssh_disconnect(*ssh);
    ssh_free(*ssh);
    *ssh = nullptr;
  }
  return why;
}

}  // namespace

// ---- files ----------------------------------------------------------------------------------------

class SftpPool::File final : public BackingFile {
 public:
  File(SftpPool* pool, std::string remote, std::unique_ptr<BackingFile> local)
      : pool_(pool), remote_(std::move(remote)), local_(std::move(local)) {}

  ~File() override {
    const uint64_t on = on_.load(std::memory_order_acquire);
    for (const auto& c : pool_->connections_) {
      if ((on & (uint64_t{1} << c->index)) == 0) continue;
      MutexLock lock(&c->mu);
      auto it = c->open.find(this);
      if (it == c->open.end()) continue;
      sftp_close(it->second);
      c->open.erase(it);
    }
  }

  // Not analysed: the connection Acquire returns is held from there to the Unlock below.
  Status ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                   uint64_t known_size, size_t* got) override NO_THREAD_SAFETY_ANALYSIS {
    // A file's first reads go through the mount: its descriptor there is open already, where
    // one over SFTP costs an open and a close, two round trips to the server, which a file read
    // whole in one or two reads never earns back.
    if (reads_.fetch_add(1, std::memory_order_relaxed) < kThroughMountFirst) {
      return local_->ReadPages(offset, len, bufs, known_size, got);
    }
    if (!refused_.load(std::memory_order_relaxed)) {
      Connection* c = pool_->Acquire(on_.load(std::memory_order_relaxed));
      std::string why;
      const bool ok = ReadOver(c, offset, len, bufs, got, &why);
      c->mu.Unlock();
      if (ok) {
        pool_->reads_.fetch_add(1, std::memory_order_relaxed);
        pool_->bytes_.fetch_add(*got, std::memory_order_relaxed);
        return Status::Ok();
      }
      pool_->FellBack(why);
    } else {
      pool_->FellBack("the server would not open it over SFTP: ", remote_);
    }
    return local_->ReadPages(offset, len, bufs, known_size, got);
  }

  Status Write(uint64_t offset, const void* buf, size_t len) override {
    return local_->Write(offset, buf, len);
  }
  Status Size(uint64_t* size) override { return local_->Size(size); }
  Status Sync(bool datasync) override { return local_->Sync(datasync); }
  bool direct() const override { return true; }  // no page cache between the daemon and the server

 private:
  // One read of the run over `c` (held); false with *why when it must go through the mount.
  bool ReadOver(Connection* c, uint64_t offset, size_t len, std::span<char* const> bufs,
                size_t* got, std::string* why) REQUIRES(c->mu) {
    if (c->sftp == nullptr) {
      if (Clock::now() < c->retry_at) {
        *why = "the connection is down";
        return false;
      }
      pool_->connects_.fetch_add(1, std::memory_order_relaxed);
      *why = Connect(pool_->target_, &c->ssh, &c->sftp);
      if (!why->empty()) {
        c->retry_at = Clock::now() + kRetryAfter;
        return false;
      }
    }
    sftp_file f = nullptr;
    if (auto it = c->open.find(this); it != c->open.end()) {
      f = it->second;
    } else {
      f = sftp_open(c->sftp, remote_.c_str(), O_RDONLY, 0);
      if (f == nullptr) {
        // A file the server will not open over SFTP (removed meanwhile, its permissions) is read
        // through the mount from now on; a lost connection is made again.
        const int code = sftp_get_error(c->sftp);
        *why = c->Failed("open " + remote_);
        const bool file_refused = code == SSH_FX_NO_SUCH_FILE ||
                                  code == SSH_FX_PERMISSION_DENIED || code == SSH_FX_FAILURE ||
                                  code == SSH_FX_OP_UNSUPPORTED;
        if (c->sftp != nullptr && file_refused) {
          refused_.store(true, std::memory_order_relaxed);
        }
        return false;
      }
      c->open.emplace(this, f);
      on_.fetch_or(uint64_t{1} << c->index, std::memory_order_acq_rel);
    }
    // The run as reads of at most kChunk, all sent before any answer is read.
    struct Piece {
      char* dst;
      uint32_t len;
      int id;
      int got;
    };
    std::vector<Piece> pieces;
    pieces.reserve(bufs.size() * ((len + kChunk - 1) / kChunk));
    for (char* buf : bufs) {
      for (size_t at = 0; at < len; at += kChunk) {
        const auto piece = static_cast<uint32_t>(std::min<size_t>(kChunk, len - at));
        pieces.push_back({buf + at, piece, -1, 0});
      }
    }
    if (sftp_seek64(f, offset) != 0) {
      *why = c->Failed("seek " + remote_);
      return false;
    }
    for (Piece& p : pieces) {
      p.id = sftp_async_read_begin(f, p.len);
      if (p.id < 0) {
        *why = c->Failed("read " + remote_);
        c->Reset();
        return false;
      }
    }
    for (Piece& p : pieces) {
      p.got = sftp_async_read(f, p.dst, p.len, static_cast<uint32_t>(p.id));
      if (p.got < 0) {
        *why = c->Failed("read " + remote_);
        c->Reset();
        return false;
      }
    }
    // The bytes up to the first piece short of its length. SFTP says EOF outright only with no
    // bytes; a piece short with bytes is the end of the file where the size says so, else (a
    // server that answered short mid-file) its rest is read again, one read at a time.
    size_t total = 0;
    uint64_t size = UINT64_MAX;
    for (Piece& p : pieces) {
      size_t have = static_cast<size_t>(p.got);
      if (have > 0 && have < p.len) {
        if (size == UINT64_MAX && !local_->Size(&size).ok()) size = 0;
        while (have < p.len && offset + total + have < size) {
          if (sftp_seek64(f, offset + total + have) != 0) {
            *why = c->Failed("seek " + remote_);
            return false;
          }
          const ssize_t n = sftp_read(f, p.dst + have, p.len - have);
          if (n < 0) {
            *why = c->Failed("read " + remote_);
            return false;
          }
          if (n == 0) break;
          have += static_cast<size_t>(n);
        }
      }
      total += have;
      if (have < p.len) break;
    }
    *got = total;
    return true;
  }

  SftpPool* const pool_;
  const std::string remote_;
  const std::unique_ptr<BackingFile> local_;
  std::atomic<uint64_t> reads_{0};      // page reads asked of this file
  std::atomic<uint64_t> on_{0};         // connections with this file open (a bit each)
  std::atomic<bool> refused_{false};    // the server would not open it: read through the mount
};

// ---- the pool -------------------------------------------------------------------------------------

SftpPool::SftpPool(const SftpTarget& target, std::function<void(const std::string&)> warn)
    : target_(target), warn_(std::move(warn)) {}

void SftpPool::FellBack(std::string_view why, std::string_view what) {
  fallbacks_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t n = unwarned_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!warn_) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          Clock::now().time_since_epoch()).count();
  int64_t last = warned_at_ns_.load(std::memory_order_relaxed);
  constexpr int64_t kEvery = 10'000'000'000;  // ns
  if (last != INT64_MIN && now - last < kEvery) return;
  if (!warned_at_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  unwarned_.fetch_sub(n, std::memory_order_relaxed);
  warn_(fmt::format("sftp: {} read{} went through the store's mount instead: {}{}", n,
                    n == 1 ? "" : "s", why, what));
}

SftpPool::~SftpPool() = default;

Status SftpPool::Open(const SftpTarget& target, int connections,
                      std::function<void(const std::string&)> warn,
                      std::unique_ptr<SftpPool>* pool) {
  if (connections < 1 || connections > kMaxConnections) {
    return Status::InvalidArgument("sftp_connections must be 1.." +
                                   std::to_string(kMaxConnections));
  }
  std::unique_ptr<SftpPool> p(new SftpPool(target, std::move(warn)));
  for (int i = 0; i < connections; ++i) {
    auto c = std::make_unique<Connection>(i);
    {
      MutexLock lock(&c->mu);
      p->connects_.fetch_add(1, std::memory_order_relaxed);
      const std::string why = Connect(target, &c->ssh, &c->sftp);
      if (!why.empty()) {
        return Status::IOError(EIO, "sftp " + target.ToString() + ": " + why);
      }
    }
    p->connections_.push_back(std::move(c));
  }
  *pool = std::move(p);
  return Status::Ok();
}

SftpPool::Connection* SftpPool::Acquire(uint64_t preferred) {
  const size_t n = connections_.size();
  const size_t first = next_.fetch_add(1, std::memory_order_relaxed) % n;
  // A free connection the file is open on saves an open; any free one saves a wait.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t k = 0; k < n; ++k) {
      Connection* c = connections_[(first + k) % n].get();
      if (pass == 0 && (preferred & (uint64_t{1} << c->index)) == 0) continue;
      if (c->mu.TryLock()) return c;
    }
  }
  Connection* c = connections_[first].get();
  for (size_t k = 0; k < n && preferred != 0; ++k) {
    Connection* d = connections_[(first + k) % n].get();
    if (preferred & (uint64_t{1} << d->index)) {
      c = d;
      break;
    }
  }
  c->mu.Lock();
  return c;
}

std::unique_ptr<BackingFile> SftpPool::Wrap(const std::string& path,
                                            std::unique_ptr<BackingFile> local) {
  std::string remote = target_.path;
  if (!path.empty()) {
    remote = remote.empty() ? path : (remote == "/" ? "/" + path : remote + "/" + path);
  }
  if (remote.empty()) remote = ".";
  return std::make_unique<File>(this, std::move(remote), std::move(local));
}

SftpCounts SftpPool::counts() const {
  SftpCounts c;
  c.reads = reads_.load(std::memory_order_relaxed);
  c.bytes = bytes_.load(std::memory_order_relaxed);
  c.fallbacks = fallbacks_.load(std::memory_order_relaxed);
  c.connects = connects_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace ccfs
