#include "util/mount_table.h"

#include <fstream>
#include <sstream>

namespace ccfs {
namespace {

// Undoes the kernel's escapes in /proc/mounts: "\ooo" (three octal digits) for space, tab,
// newline and backslash.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
        s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool IsMounted(const std::string& path) {
  // Each line: device, mount point, then type, options and two numbers that are not needed here.
  std::ifstream in("/proc/mounts");
  std::string dev, mnt, rest;
  while (in >> dev >> mnt && std::getline(in, rest)) {
    if (mnt == path) return true;
  }
  return false;
}

bool ParseMountLine(const std::string& line, MountEntry* entry) {
  std::istringstream fields(line);
  MountEntry e;
  if (!(fields >> e.source >> e.target >> e.type)) return false;
  e.source = Unescape(e.source);
  e.target = Unescape(e.target);
  *entry = e;
  return true;
}

bool TopMountAt(const std::string& path, MountEntry* entry) {
  std::ifstream in("/proc/mounts");
  std::string line;
  bool found = false;
  MountEntry e;
  while (std::getline(in, line)) {
    if (!ParseMountLine(line, &e) || e.target != path) continue;
    *entry = e;
    found = true;
  }
  return found;
}

std::string MountDeviceAt(const std::string& path) {
  // Each line: mount id, parent id, MAJ:MIN, root, mount point, then fields not needed here.
  std::ifstream in("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (!(fields >> id >> parent >> dev >> root >> point)) continue;
    if (Unescape(point) == path) found = dev;
  }
  return found;
}

}  // namespace ccfs
