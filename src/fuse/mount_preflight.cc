#include "fuse/mount_preflight.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ccfs/mount_protocol.h"
#include "fuse/log.h"

extern char** environ;

namespace ccfs {

namespace {

constexpr char kCcfsMountType[] = "fuse.ccfs";

// "EACCES" for EACCES: messages name the errno as well as its text.
std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : std::to_string(err);
}

bool IsDeadConnection(int err) { return err == ENOTCONN || err == ECONNABORTED; }

// Resolves `path` to an absolute directory path; `what` names it in errors. *stat_errno gets
// stat(2)'s errno (0 on success) so the caller can tell a dead mount from other failures.
Status ResolveDirectory(const std::string& what, const std::string& path, std::string* resolved,
                        int* stat_errno = nullptr) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (stat_errno != nullptr) *stat_errno = err;
    if (IsDeadConnection(err)) {
      return Status::IOError(err, fmt::format(
          "{} {}: a FUSE daemon that served it has died and left it mounted; run "
          "\"fusermount3 -u {}\" first",
          what, path, path));
    }
    return Status::FromErrno(err, fmt::format("{} {}", what, path));
  }
  if (stat_errno != nullptr) *stat_errno = 0;
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(fmt::format("{} {}: not a directory", what, path));
  }
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) == nullptr) {
    return Status::FromErrno(errno, fmt::format("{} {}", what, path));
  }
  *resolved = buf;
  return Status::Ok();
}

// The absolute path of `path` without looking up its last component, which on a dead mount
// answers ENOTCONN: realpath(3) of the parent, then the name. False for a last component of
// "." or ".." (the parent is then the dead mount itself) or a parent that does not resolve.
bool AbsoluteWithoutLastLookup(const std::string& path, std::string* out) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
  std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") return false;
  char buf[PATH_MAX];
  if (realpath(parent.c_str(), buf) == nullptr) return false;
  std::string dir = buf;
  *out = (dir == "/" ? "" : dir) + "/" + name;
  return true;
}

// Detaches the mount on top at `path`. Root (CAP_SYS_ADMIN) does it with umount2(2); anyone else
// asks fusermount3, which lets a user unmount the FUSE mounts they made.
Status DetachMount(const std::string& path) {
  if (umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0) return Status::Ok();
  if (errno != EPERM) return Status::FromErrno(errno, "umount2(MNT_DETACH) " + path);
  const char* argv[] = {"fusermount3", "-u", "-z", "--", path.c_str(), nullptr};
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], nullptr, nullptr, const_cast<char* const*>(argv), environ);
  if (err != 0) return Status::FromErrno(err, "fusermount3 -u -z " + path);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::FromErrno(errno, "fusermount3 -u -z " + path);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::IOError(0, fmt::format("fusermount3 -u -z {} failed (it said why above)", path));
  }
  return Status::Ok();
}

// A mount point whose daemon has died: a dead ccfs mount is cleared, so that a remount after a
// crash needs no manual step; anything else keeps the refusal `refusal` (ResolveDirectory's).
// On success *resolved is the mount point, resolved again now that the dead mount is gone.
Status ClearDeadCcfsMount(const std::string& path, int stat_errno, const Status& refusal,
                          std::string* resolved) {
  // Stacked dead mounts are cleared one at a time; a bound keeps a mount table that never
  // changes from looping.
  for (int round = 0; round < 8; ++round) {
    std::string absolute;
    MountEntry top;
    if (!AbsoluteWithoutLastLookup(path, &absolute)) return refusal;
    const bool listed = TopMountAt(absolute, &top);
    if (!IsDeadCcfsMount(stat_errno, listed ? &top : nullptr)) {
      return round == 0 ? refusal : ResolveDirectory("mount point", path, resolved);
    }
    Status s = DetachMount(absolute);
    if (!s.ok()) {
      return Status::IOError(0, fmt::format(
          "mount point {} holds a dead ccfs mount (of {}) that could not be cleared ({}); run "
          "\"fusermount3 -u {}\" first", path, top.source, s.ToString(), path));
    }
    LogInfo(fmt::format("mount point {}: cleared a dead ccfs mount of {} left by a daemon that "
                        "ended without unmounting (lazy unmount)", absolute, top.source));
    Status again = ResolveDirectory("mount point", path, resolved, &stat_errno);
    if (again.ok() || !IsDeadConnection(stat_errno)) return again;
  }
  return refusal;
}

// A second ccfs mount on a live one would stack: new opens reach the top daemon, the one beneath
// keeps its memory and the files already open on it, and it takes two unmounts to clear. Nothing
// ccfs does needs that, so it is refused; unmount first.
Status RefuseStackedMount(const std::string& mountpoint) {
  MountEntry top;
  if (!TopMountAt(mountpoint, &top) || top.type != kCcfsMountType) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "mount point {} already has a ccfs mount (of {}); run \"ccfs umount {}\" first",
      mountpoint, top.source, mountpoint));
}

// What the daemon will do with the dataset, done once now as the daemon's identity: open it,
// read its entries, and (faccessat, effective identity and capabilities) search it.
Status CheckDatasetReadable(const std::string& dataset) {
  auto refuse = [&](const char* what, int err) {
    return Status::IOError(err, fmt::format(
        "dataset {}: cannot {} as uid {} gid {}, the identity the daemon serves with ({})",
        dataset, what, geteuid(), getegid(), ErrnoName(err)));
  };
  int fd = open(dataset.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return refuse("open it", errno);
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    close(fd);
    return refuse("list it", err);
  }
  errno = 0;
  const bool listed = readdir(dir) != nullptr || errno == 0;
  const int err = errno;
  closedir(dir);
  if (!listed) return refuse("list it", err);
  if (faccessat(AT_FDCWD, dataset.c_str(), X_OK, AT_EACCESS) != 0) {
    return refuse("search it (open the files in it)", errno);
  }
  return Status::Ok();
}

// True if `path` is `dir` or lies beneath it (both resolved, absolute).
bool IsAtOrUnder(const std::string& path, const std::string& dir) {
  if (path == dir || dir == "/") return true;
  return path.rfind(dir + "/", 0) == 0;
}

Status RefuseOverlap(const std::string& dataset, const std::string& mountpoint) {
  struct stat ds, mp;
  const bool same_dir = stat(dataset.c_str(), &ds) == 0 && stat(mountpoint.c_str(), &mp) == 0 &&
                        ds.st_dev == mp.st_dev && ds.st_ino == mp.st_ino;
  if (same_dir || dataset == mountpoint) {
    return Status::InvalidArgument(fmt::format(
        "mount point {} is dataset {} itself: the mount would hide the dataset from the daemon, "
        "which opens it again by path when the store beneath comes back, and would then serve its "
        "own mount; mount it elsewhere", mountpoint, dataset));
  }
  if (IsAtOrUnder(mountpoint, dataset)) {
    return Status::InvalidArgument(fmt::format(
        "mount point {} is inside dataset {}: the daemon would read its own mount", mountpoint,
        dataset));
  }
  if (IsAtOrUnder(dataset, mountpoint)) {
    return Status::InvalidArgument(fmt::format(
        "mount point {} contains dataset {}: the mount would hide the dataset's path from the "
        "daemon, which opens it again when the store beneath comes back, and would then serve its "
        "own mount; mount it elsewhere", mountpoint, dataset));
  }
  return Status::Ok();
}

// The control directory is answered by name at the mount's root before any lookup in the
// dataset, so a dataset's own entry of that name is unreachable through the mount.
void WarnShadowedControlDir(const std::string& dataset, const std::string& mountpoint) {
  struct stat st;
  const std::string own = dataset + "/" + kControlDirName;
  if (lstat(own.c_str(), &st) != 0) return;
  LogWarning(fmt::format("{} in the dataset is hidden in the mount by ccfs's control directory "
                         "{}/{}; reach it in the dataset itself",
                         own, mountpoint, kControlDirName));
}

}  // namespace

bool IsDeadCcfsMount(int stat_errno, const MountEntry* top) {
  return IsDeadConnection(stat_errno) && top != nullptr && top->type == kCcfsMountType;
}

Status PrepareMountPaths(const std::string& dataset_arg, const std::string& mountpoint_arg,
                         std::string* dataset, std::string* mountpoint) {
  Status s = ResolveDirectory("dataset", dataset_arg, dataset);
  if (!s.ok()) return s;
  s = CheckDatasetReadable(*dataset);
  if (!s.ok()) return s;
  int stat_errno = 0;
  s = ResolveDirectory("mount point", mountpoint_arg, mountpoint, &stat_errno);
  if (!s.ok() && IsDeadConnection(stat_errno)) {
    s = ClearDeadCcfsMount(mountpoint_arg, stat_errno, s, mountpoint);
  }
  if (!s.ok()) return s;
  s = RefuseStackedMount(*mountpoint);
  if (!s.ok()) return s;
  s = RefuseOverlap(*dataset, *mountpoint);
  if (!s.ok()) return s;
  WarnShadowedControlDir(*dataset, *mountpoint);
  return Status::Ok();
}

}  // namespace ccfs
