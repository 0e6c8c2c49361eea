#include "util/proc_status.h"

#include <fstream>

namespace ccfs {

uint64_t ProcStatusBytes(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
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

}  // namespace ccfs
