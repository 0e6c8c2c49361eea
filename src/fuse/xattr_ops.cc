// Handlers for extended attributes (see ops.h).
//
// Extended attributes need a path or a real descriptor; an O_PATH descriptor of a symlink would
// name the link's target through /proc, so symlinks (and the virtual nodes) have none here.
#include <sys/xattr.h>

#include <cerrno>
#include <string>
#include <vector>

#include "fuse/ops.h"

namespace ccfs::ops {

namespace {

// The path to reach `i`'s attributes by, valid while *fd is held, or ENOTSUP.
int XattrPath(fuse_req_t req, fuse_ino_t ino, InodeFd* fd, std::string* path) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal || i->type == S_IFLNK) return ENOTSUP;
  *fd = fs->inodes.Borrow(i);
  if (!*fd) return fd->error();
  *path = ProcPath(fd->get());
  return 0;
}

}  // namespace

void Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
              int flags) {
  InodeFd fd;
  std::string path;
  int err = XattrPath(req, ino, &fd, &path);
  if (err != 0) return (void)ReplyErr(req, err);
  int res = setxattr(path.c_str(), name, value, size, flags);
  ReplyResult(req, res);
}

void Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  InodeFd fd;
  std::string path;
  int err = XattrPath(req, ino, &fd, &path);
  if (err != 0) return (void)ReplyErr(req, err == ENOTSUP ? ENODATA : err);
  if (size == 0) {
    ssize_t n = getxattr(path.c_str(), name, nullptr, 0);
    if (n < 0) return (void)ReplyErr(req, errno);
    return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
  }
  std::vector<char> buf(size);
  ssize_t n = getxattr(path.c_str(), name, buf.data(), size);
  if (n < 0) return (void)ReplyErr(req, errno);
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

void Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  InodeFd fd;
  std::string path;
  int err = XattrPath(req, ino, &fd, &path);
  if (err == ENOTSUP) {
    // Virtual nodes and symlinks have no attributes to list.
    return (void)(size == 0 ? fuse_reply_xattr(req, 0) : fuse_reply_buf(req, nullptr, 0));
  }
  if (err != 0) return (void)ReplyErr(req, err);
  if (size == 0) {
    ssize_t n = listxattr(path.c_str(), nullptr, 0);
    if (n < 0) return (void)ReplyErr(req, errno);
    return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
  }
  std::vector<char> buf(size);
  ssize_t n = listxattr(path.c_str(), buf.data(), size);
  if (n < 0) return (void)ReplyErr(req, errno);
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

void Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  InodeFd fd;
  std::string path;
  int err = XattrPath(req, ino, &fd, &path);
  if (err != 0) return (void)ReplyErr(req, err);
  int res = removexattr(path.c_str(), name);
  ReplyResult(req, res);
}

}  // namespace ccfs::ops
