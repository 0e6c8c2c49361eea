// Set-user-ID and set-group-ID bits through the mount behave as on DATASET itself: a write or a
// truncate by a caller without CAP_FSETID clears S_ISUID (and S_ISGID when the group may execute),
// a caller with it keeps them, and chown/chgrp clears them. The daemon runs as root, so the backing
// file system alone would keep them: the daemon must clear them the way the kernel asks it to.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "posix/posix_test_util.h"

namespace ccfs::testing {
namespace {

// "mode=..." of an open descriptor, or the errno of the call that failed.
std::string ModeOfFd(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return std::string("fstat: ") + strerror(errno);
  return "mode=" + Octal(st.st_mode);
}

std::string ModeOfPath(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::string("stat: ") + strerror(errno);
  return "mode=" + Octal(st.st_mode);
}

class KillPrivTest : public AllowOtherTest {};

// Creates `path` with a few bytes, then sets its mode and owner (as root).
void Make(Recorder& r, const std::string& path, mode_t mode, uid_t uid = 0, gid_t gid = 0) {
  int fd = r.Fd("create " + path.substr(path.rfind('/') + 1), open(path.c_str(), O_CREAT | O_WRONLY, 0600));
  r.Ret("write", write(fd, "data", 4));
  close(fd);
  r.Ret("chown", chown(path.c_str(), uid, gid));
  r.Ret("chmod", chmod(path.c_str(), mode));
}

TEST_F(KillPrivTest, WriteByANonOwnerClearsSetIdBits) {
  Compare([](Recorder& r, const std::string& d) {
    for (mode_t mode : {04777, 02777, 06777, 02767}) {
      const std::string f = d + "/w" + Octal(mode);
      Make(r, f, mode);
      r.Value("write as nobody, " + Octal(mode), AsNobody([&] {
                int fd = open(f.c_str(), O_WRONLY);
                if (fd < 0) return std::string("open: ") + strerror(errno);
                if (write(fd, "x", 1) != 1) return std::string("write: ") + strerror(errno);
                std::string mode_after = ModeOfFd(fd);
                close(fd);
                return mode_after;
              }));
      r.Value("stat after", ModeOfPath(f));
    }
    // Root has CAP_FSETID: the bits stay.
    const std::string f = d + "/root_writes";
    Make(r, f, 06777);
    int fd = open(f.c_str(), O_WRONLY);
    r.Ret("write as root", write(fd, "x", 1));
    close(fd);
    r.Value("stat after root's write", ModeOfPath(f));
  });
}

TEST_F(KillPrivTest, TruncateByANonOwnerClearsSetIdBits) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string t = d + "/truncate";
    Make(r, t, 06777);
    r.Value("truncate as nobody", AsNobody([&] {
              if (truncate(t.c_str(), 2) != 0) return std::string("truncate: ") + strerror(errno);
              return ModeOfPath(t);
            }));
    const std::string ft = d + "/ftruncate";
    Make(r, ft, 06777);
    r.Value("ftruncate as nobody", AsNobody([&] {
              int fd = open(ft.c_str(), O_WRONLY);
              if (fd < 0) return std::string("open: ") + strerror(errno);
              if (ftruncate(fd, 9) != 0) return std::string("ftruncate: ") + strerror(errno);
              std::string mode_after = ModeOfFd(fd);
              close(fd);
              return mode_after;
            }));
    const std::string ot = d + "/o_trunc";
    Make(r, ot, 04777);
    r.Value("open O_TRUNC as nobody", AsNobody([&] {
              int fd = open(ot.c_str(), O_WRONLY | O_TRUNC);
              if (fd < 0) return std::string("open: ") + strerror(errno);
              std::string mode_after = ModeOfFd(fd);
              close(fd);
              return mode_after;
            }));
    const std::string rt = d + "/root_truncates";
    Make(r, rt, 06777);
    r.Ret("truncate as root", truncate(rt.c_str(), 1));
    r.Value("stat after root's truncate", ModeOfPath(rt));
  });
}

TEST_F(KillPrivTest, ChownAndChgrpClearSetIdBits) {
  Compare([](Recorder& r, const std::string& d) {
    const std::string g = d + "/chgrp";
    Make(r, g, 06775, kNobody, kNobody);
    r.Value("chgrp by its owner", AsNobody([&] {
              if (chown(g.c_str(), static_cast<uid_t>(-1), kNobody) != 0) {
                return std::string("chown: ") + strerror(errno);
              }
              return ModeOfPath(g);
            }));
    const std::string o = d + "/chown";
    Make(r, o, 06755);
    r.Ret("chown by root", chown(o.c_str(), 1, 1));
    r.Value("stat after chown", ModeOfPath(o));
  });
}

}  // namespace
}  // namespace ccfs::testing
