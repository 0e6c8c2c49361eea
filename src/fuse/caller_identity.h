// CallerIdentity: for the length of one scope, the calling thread acts on the backing file system
// as the user who made a FUSE request, so that a node the daemon creates for that user is created
// the way the kernel would create it for them on DATASET itself.
//
// Why. A daemon running as root that creates a node and then gives it away with chown gets two
// things wrong that no later chown can put right: the node's group (a set-group-ID directory gives
// its group to what is created in it, and its S_ISGID bit to new subdirectories; the chown then
// replaced that group with the caller's) and its set-id bits (root's chown of a non-directory
// clears S_ISUID, and S_ISGID when group-executable, that the caller had asked for). Creating as
// the caller also lets the backing file system check the caller's permission again, with what the
// kernel's FUSE client cannot see (POSIX ACLs, attributes changed underneath since it cached them),
// and decide with the caller's groups whether a new file keeps S_ISGID.
//
// What changes, on this thread only:
//   fsuid, fsgid  the caller's (fuse_req_ctx). Linux checks file access and names the owner of a
//                 new node by these; moving fsuid off 0 also drops the file-system capabilities
//                 (CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_MKNOD, ...) from the effective
//                 set, and moving it back to 0 raises them again from the permitted set.
//   groups        the caller's supplementary groups (fuse_req_getgroups, which reads the caller's
//                 /proc/PID/task/PID/status). Without them a caller who may write a directory only
//                 through a supplementary group would be refused, and a new file in a set-group-ID
//                 directory of such a group would lose S_ISGID. When they cannot be read (the
//                 caller has exited, or lives in a PID namespace the daemon cannot see) the thread
//                 gets none: the backing file system may then refuse what the kernel allowed
//                 (EACCES), never the other way round; the daemon's own groups are never lent out.
//   euid, egid, capabilities other than those above: unchanged.
//
// When nothing changes: when the daemon does not run as root (it cannot switch, and without
// allow_other the caller is the daemon's own user anyway), and when the caller is root with the
// daemon's group (the daemon then already acts as the caller).
//
// Why per thread. Linux keeps credentials per thread; the process-wide calls (glibc's setuid,
// setgroups, ... broadcast the change to every thread, as POSIX asks) would make every request
// thread act as this caller. setfsuid and setfsgid are per thread in glibc too; supplementary
// groups are changed with the raw system call, which is per thread.
//
// Thread-safety: a CallerIdentity belongs to the thread that made it and must be destroyed on that
// thread; any number of threads may each hold one at once. Hold it only around the system calls
// that create the node: whatever else runs in the scope runs as the caller. The destructor puts
// back the thread's fsuid, fsgid and groups on every path; if Linux refuses that (it cannot while
// the daemon keeps CAP_SETUID and CAP_SETGID), the process aborts rather than serve later requests
// with another user's identity. The destructor makes system calls of its own: read errno inside the
// scope.
#ifndef CCFS_FUSE_CALLER_IDENTITY_H_
#define CCFS_FUSE_CALLER_IDENTITY_H_

#include <sys/types.h>

#include <vector>

struct fuse_req;

namespace ccfs {

class CallerIdentity {
 public:
  // Switches this thread to the identity of `req`'s caller, if it must (see above).
  // REQUIRES: `req` is the request this thread is serving.
  explicit CallerIdentity(fuse_req* req);
  ~CallerIdentity();

  CallerIdentity(const CallerIdentity&) = delete;
  CallerIdentity& operator=(const CallerIdentity&) = delete;

  // 0 when the thread now acts as the caller (or needed no change); otherwise the errno of the step
  // Linux refused, and the thread's identity is as it was before. A handler replies with it rather
  // than create the node as root.
  int error() const { return error_; }

 private:
  void Restore();

  int error_ = 0;
  bool switched_ = false;
  uid_t saved_fsuid_ = 0;
  gid_t saved_fsgid_ = 0;
  std::vector<gid_t> saved_groups_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_CALLER_IDENTITY_H_
