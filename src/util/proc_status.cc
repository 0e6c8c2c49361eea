#include "util/proc_status.h"

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

}  // namespace ccfs
