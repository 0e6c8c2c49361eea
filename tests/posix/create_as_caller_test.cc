// A node another user creates through the mount comes out as the kernel makes it for them on
// DATASET itself: owned by them, in the group a set-group-ID directory gives (a new directory takes
// its S_ISGID bit too), with the set-id bits they asked for, and only where the backing file system
// lets them create, supplementary groups and POSIX ACLs included. The daemon runs as root: a node
// it creates as root and gives away with chown afterwards gets each of these wrong. A link makes no
// node, and leaves the file's owner alone.
#include <fcntl.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "posix/posix_test_util.h"

namespace ccfs::testing {
namespace {

constexpr gid_t kGroup = 1234;  // a group neither root nor nobody is in, unless given it

// Type, mode, owner and group of `path` (not followed), or the errno of lstat.
std::string Node(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return std::string("lstat: ") + strerror(errno);
  char buf[96];
  snprintf(buf, sizeof(buf), "type=%o mode=%s uid=%u gid=%u", st.st_mode & S_IFMT,
           Octal(st.st_mode).c_str(), st.st_uid, st.st_gid);
  return buf;
}

// What a creating call left at `path`: the node, or the errno the call (returning `ret`) set.
std::string Made(long ret, const std::string& path) {
  if (ret < 0) return std::string("failed: ") + strerror(errno);
  return Node(path);
}

std::string CreateFile(const std::string& path, int flags, mode_t mode) {
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | flags, mode);
  if (fd >= 0) close(fd);
  return Made(fd, path);
}

std::string MakeDir(const std::string& path, mode_t mode) {
  return Made(mkdir(path.c_str(), mode), path);
}

std::string MakeFifo(const std::string& path, mode_t mode) {
  return Made(mknod(path.c_str(), S_IFIFO | mode, 0), path);
}

std::string MakeSymlink(const std::string& path) {
  return Made(symlink("target", path.c_str()), path);
}

// As root: a directory at `path` with this owner, group and mode.
void MakeDirFor(Recorder& r, const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  const std::string name = path.substr(path.rfind('/') + 1);
  r.Ret("mkdir " + name, mkdir(path.c_str(), 0700));
  r.Ret("chown " + name, chown(path.c_str(), uid, gid));
  r.Ret("chmod " + name, chmod(path.c_str(), mode));
}

class CreateAsCallerTest : public AllowOtherTest {
 protected:
  // One thread serves every request: a step as root right after one as nobody shows that the
  // thread's own identity was put back.
  void SetUp() override { MountForOthers(",request_threads=1"); }

  // The DATASET path of `path`, which is on the mount or already in DATASET.
  std::string Backing(const std::string& path) const {
    const std::string mnt = ds_.mnt();
    return path.compare(0, mnt.size(), mnt) == 0 ? ds_.data() + path.substr(mnt.size()) : path;
  }
};

TEST_F(CreateAsCallerTest, SetGidDirectoryGivesItsGroupToNewNodes) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string sg = d + "/sgid";
    MakeDirFor(r, sg, 0, kGroup, 02777);
    r.Value("file by nobody", AsNobody([&] { return CreateFile(sg + "/file", 0, 0644); }));
    r.Value("dir by nobody", AsNobody([&] { return MakeDir(sg + "/dir", 0755); }));
    r.Value("fifo by nobody", AsNobody([&] { return MakeFifo(sg + "/fifo", 0644); }));
    r.Value("symlink by nobody", AsNobody([&] { return MakeSymlink(sg + "/link"); }));
    // The new directory passes group and bit on.
    r.Value("file in the new dir", AsNobody([&] { return CreateFile(sg + "/dir/f", 0, 0600); }));
    r.Value("dir in the new dir", AsNobody([&] { return MakeDir(sg + "/dir/d", 0700); }));
    // Asked for S_ISGID in a group nobody is not in: the kernel drops it.
    r.Value("02755 file by nobody", AsNobody([&] { return CreateFile(sg + "/g", 0, 02755); }));
    r.Value("file by root", CreateFile(sg + "/root_file", 0, 0644));
    r.Value("dir by root", MakeDir(sg + "/root_dir", 0755));
  });
}

TEST_F(CreateAsCallerTest, SetIdBitsOfANewNodeAreTheOnesAskedFor) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string o = d + "/open";
    MakeDirFor(r, o, 0, 0, 0777);
    r.Value("04755 file by nobody", AsNobody([&] { return CreateFile(o + "/u", 0, 04755); }));
    r.Value("06755 file by nobody", AsNobody([&] { return CreateFile(o + "/ug", 0, 06755); }));
    r.Value("02745 file by nobody", AsNobody([&] { return CreateFile(o + "/g", 0, 02745); }));
    // creat(): O_TRUNC on a file the call creates truncates nothing and clears nothing.
    r.Value("04755 creat() by nobody",
            AsNobody([&] { return CreateFile(o + "/creat", O_TRUNC, 04755); }));
    r.Value("07777 dir by nobody", AsNobody([&] { return MakeDir(o + "/dir", 07777); }));
    r.Value("04666 fifo by nobody", AsNobody([&] { return MakeFifo(o + "/fifo", 04666); }));
    // Root creates as root, with the bits it asked for, wherever it likes.
    r.Value("06755 file by root", CreateFile(o + "/root_file", 0, 06755));
    r.Value("04666 fifo by root", MakeFifo(o + "/root_fifo", 04666));
    const std::string theirs = d + "/nobodys";
    MakeDirFor(r, theirs, kNobody, kNobody, 0700);
    r.Value("file by root in nobody's 0700 dir", CreateFile(theirs + "/f", 0, 0644));
    r.Value("symlink by root in nobody's 0700 dir", MakeSymlink(theirs + "/l"));
  });
}

TEST_F(CreateAsCallerTest, SupplementaryGroupsCountAsTheCallers) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string g = d + "/group";
    MakeDirFor(r, g, 0, kGroup, 02770);  // writable by kGroup only
    auto member = [](const std::function<std::string()>& fn) {
      return AsUser(kNobody, kNobody, {kGroup}, fn);
    };
    // Allowed through the supplementary group, and as a member nobody keeps S_ISGID.
    r.Value("02755 file by a member", member([&] { return CreateFile(g + "/file", 0, 02755); }));
    r.Value("dir by a member", member([&] { return MakeDir(g + "/dir", 0750); }));
    r.Value("fifo by a member", member([&] { return MakeFifo(g + "/fifo", 0640); }));
    r.Value("symlink by a member", member([&] { return MakeSymlink(g + "/link"); }));
    r.Value("file by a non-member", AsNobody([&] { return CreateFile(g + "/no", 0, 0644); }));
  });
}

// Bytes of a system.posix_acl_access value: the owner, group and others may do anything, but
// the named user `uid` may only read and search.
std::string AclDenyingWriteTo(uid_t uid) {
  struct Entry {
    uint16_t tag, perm;
    uint32_t id;
  };
  const uint32_t kNoId = static_cast<uint32_t>(ACL_UNDEFINED_ID);
  const std::vector<Entry> entries = {{ACL_USER_OBJ, 7, kNoId},  {ACL_USER, 5, uid},
                                      {ACL_GROUP_OBJ, 7, kNoId}, {ACL_MASK, 7, kNoId},
                                      {ACL_OTHER, 7, kNoId}};
  posix_acl_xattr_header header = {POSIX_ACL_XATTR_VERSION};
  std::string value(reinterpret_cast<const char*>(&header), sizeof(header));
  for (const Entry& e : entries) {
    posix_acl_xattr_entry x = {e.tag, e.perm, e.id};
    value.append(reinterpret_cast<const char*>(&x), sizeof(x));
  }
  return value;
}

// The kernel's FUSE client sees only the mode bits (0777 here) and lets nobody in; DATASET's ACL
// shuts nobody out, and the backing file system must say so to nobody through the mount too.
TEST_F(CreateAsCallerTest, BackingFileSystemRefusesWhatItRefusesTheCaller) {
  Compare([this](Recorder& r, const std::string& d) {
    const std::string a = d + "/acl";
    MakeDirFor(r, a, 0, 0, 0777);
    const std::string acl = AclDenyingWriteTo(kNobody);
    r.Ret("setxattr on DATASET", setxattr(Backing(a).c_str(), "system.posix_acl_access",
                                           acl.data(), acl.size(), 0));
    r.Value("file by nobody", AsNobody([&] { return CreateFile(a + "/file", 0, 0644); }));
    r.Value("dir by nobody", AsNobody([&] { return MakeDir(a + "/dir", 0755); }));
    r.Value("fifo by nobody", AsNobody([&] { return MakeFifo(a + "/fifo", 0644); }));
    r.Value("symlink by nobody", AsNobody([&] { return MakeSymlink(a + "/link"); }));
    r.Value("file by root", CreateFile(a + "/root_file", 0, 0644));
  });
}

TEST_F(CreateAsCallerTest, LinkLeavesTheOwnerAlone) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string o = d + "/open";
    MakeDirFor(r, o, 0, 0, 0777);
    r.Value("root's file", CreateFile(o + "/f", 0, 0644));
    r.Ret("chmod f", chmod((o + "/f").c_str(), 0666));
    // fs.protected_hardlinks lets anyone who may read and write a file link it.
    r.Value("link by nobody", AsNobody([&] {
              return Made(link((o + "/f").c_str(), (o + "/g").c_str()), o + "/g");
            }));
    r.Value("the file after", Node(o + "/f"));
  });
}

}  // namespace
}  // namespace ccfs::testing
