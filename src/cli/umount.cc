// ccfs umount MOUNTPOINT: unmounts a ccfs mount (fusermount3 -u) and waits for its daemon to exit.
//
// The daemon's pid comes from the mount (client/mount_client.h: ReadDaemonPid), read before the
// unmount with a timeout, so a hung daemon cannot hang the command.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "cli/command.h"
#include "client/mount_client.h"

namespace ccfs {
namespace {

struct UmountArgs {
  std::string mountpoint;
  double timeout_s = 10;
};

// /proc/mounts writes space, tab, newline and backslash as octal escapes.
std::string UnescapeMountField(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The file system type of the mount at `path` ("" when nothing is mounted there).
std::string MountType(const std::string& path) {
  std::ifstream in("/proc/mounts");
  std::string dev, mnt, type, rest, found;
  while (in >> dev >> mnt >> type && std::getline(in, rest)) {
    if (UnescapeMountField(mnt) == path) found = type;  // the last one is on top
  }
  return found;
}

int RunUmount(const UmountArgs& args) {
  std::error_code ec;
  std::string path = std::filesystem::absolute(args.mountpoint, ec).lexically_normal().string();
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (!ec) path = canonical.string();  // ENOTCONN (dead daemon) keeps the lexical path
  std::string type = MountType(path);
  if (type.empty()) {
    fprintf(stderr, "ccfs umount: %s: not mounted\n", path.c_str());
    return 1;
  }
  if (type != "fuse.ccfs") {
    fprintf(stderr, "ccfs umount: %s: a %s mount, not ccfs\n", path.c_str(), type.c_str());
    return 1;
  }
  pid_t pid = ReadDaemonPid(path, std::chrono::seconds(2));
  pid_t child = fork();
  if (child == 0) {
    execlp("fusermount3", "fusermount3", "-u", path.c_str(), static_cast<char*>(nullptr));
    perror("ccfs umount: fusermount3");
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    fprintf(stderr, "ccfs umount: fusermount3 -u %s failed\n", path.c_str());
    return 1;
  }
  if (pid <= 0) return 0;  // a dead daemon, or one too old to say who it is
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(args.timeout_s);
  while (kill(pid, 0) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      fprintf(stderr, "ccfs umount: %s unmounted, but daemon %d is still running after %.0f s\n",
              path.c_str(), static_cast<int>(pid), args.timeout_s);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

CommandRegistrar reg_umount("umount", "unmount a ccfs mount and wait for its daemon to exit",
                     [](CLI::App* app) {
  auto args = std::make_shared<UmountArgs>();
  app->add_option("mountpoint", args->mountpoint, "the mount point")->required();
  app->add_option("--timeout", args->timeout_s, "seconds to wait for the daemon to exit");
  return [args] { return RunUmount(*args); };
});

}  // namespace
}  // namespace ccfs
