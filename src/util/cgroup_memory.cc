#include "util/cgroup_memory.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace ccfs {
namespace {

bool ReadText(const std::string& path, std::string* text) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

// The first number in `path`; false for "max" (v2's no limit) or anything else.
bool ReadNumber(const std::string& path, uint64_t* v) {
  std::string text;
  if (!ReadText(path, &text)) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *v);
  return ec == std::errc();
}

// The value of `key` in a memory.stat file ("key value" lines).
bool ReadStat(const std::string& path, const std::string& key, uint64_t* v) {
  std::ifstream in(path);
  std::string k;
  uint64_t value = 0;
  while (in >> k >> value) {
    if (k == key) {
      *v = value;
      return true;
    }
  }
  return false;
}

}  // namespace

bool ReadCgroupMemory(CgroupMemory* m, const std::string& root, const std::string& self) {
  std::string text = self;
  if (text.empty() && !ReadText("/proc/self/cgroup", &text)) return false;
  std::istringstream lines(text);
  std::string line, v1, v2;
  bool has_v2 = false;
  while (std::getline(lines, line)) {
    // hierarchy-ID:controllers:path
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      v2 = path;
      has_v2 = true;
    }
    std::istringstream names(controllers);
    for (std::string n; std::getline(names, n, ',');) {
      if (n == "memory") v1 = path;
    }
  }
  *m = CgroupMemory{};
  const std::string dir1 = root + "/memory" + v1;
  if (!v1.empty() && ReadNumber(dir1 + "/memory.limit_in_bytes", &m->limit) &&
      ReadNumber(dir1 + "/memory.usage_in_bytes", &m->usage)) {
    ReadStat(dir1 + "/memory.stat", "cache", &m->file);
    // A parent's limit holds too (use_hierarchy, always on since Linux 5.x): the kernel gives the
    // tightest of them in memory.stat.
    uint64_t hierarchical = 0;
    if (ReadStat(dir1 + "/memory.stat", "hierarchical_memory_limit", &hierarchical) &&
        hierarchical < m->limit) {
      m->limit = hierarchical;
    }
    // v1 writes "no limit" as the largest page-aligned signed 64-bit number.
    if (m->limit >= (1ull << 62)) m->limit = 0;
    return m->limit != 0;
  }
  const std::string dir2 = root + v2;
  if (has_v2 && ReadNumber(dir2 + "/memory.current", &m->usage)) {
    ReadStat(dir2 + "/memory.stat", "file", &m->file);
    // The tightest memory.max of the cgroup and its ancestors ("max", or none at the root: no
    // limit there).
    for (std::string path = v2;;) {
      uint64_t max = 0;
      if (ReadNumber(root + path + "/memory.max", &max) && max != 0 &&
          (m->limit == 0 || max < m->limit)) {
        m->limit = max;
      }
      if (path.empty() || path == "/") break;
      const size_t slash = path.rfind('/');
      path = slash == std::string::npos || slash == 0 ? "" : path.substr(0, slash);
    }
    if (m->limit != 0) return true;
  }
  *m = CgroupMemory{};
  return false;
}

}  // namespace ccfs
