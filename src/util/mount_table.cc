#include "util/mount_table.h"

#include <fstream>

namespace ccfs {

bool IsMounted(const std::string& path) {
  // Each line: device, mount point, then type, options and two numbers that are not needed here.
  std::ifstream in("/proc/mounts");
  std::string dev, mnt, rest;
  while (in >> dev >> mnt && std::getline(in, rest)) {
    if (mnt == path) return true;
  }
  return false;
}

}  // namespace ccfs
