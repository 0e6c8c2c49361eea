#include "util/proc_status.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>

namespace ccfs {

namespace {

// The kB figure after `key` in a "Key: value kB" file, times 1024.
uint64_t KbLine(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string word;
  while (in >> word) {
    if (word == key) {
      uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::getline(in, word);
  }
  return 0;
}

}  // namespace

uint64_t ProcStatusBytes(pid_t pid, const std::string& key) {
  return KbLine("/proc/" + std::to_string(pid) + "/status", key);
}

uint64_t ProcMeminfoBytes(const std::string& key, const std::string& path) {
  return KbLine(path, key);
}

uint64_t OpenDescriptorCount(pid_t pid) {
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return 0;
  uint64_t n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  if (pid == getpid() && n > 0) --n;  // less the descriptor of the listing itself
  return n;
}

uint64_t OpenDescriptorCount() { return OpenDescriptorCount(getpid()); }

}  // namespace ccfs
