// RAPL through powercap (see rapl.h for which zones count and what the joules mean).
//
// Why zones are found by name under the root rather than by walking the control type's tree:
// the class directory lists every zone and subzone flat, as symlinks, on every kernel since
// powercap appeared (3.13), and a zone's place in the hierarchy is spelled in its name
// (intel-rapl:N is a top-level zone, intel-rapl:N:M its subzone), so one listing and a name check
// tell packages from their parts. Taking the root as a parameter lets tests build a fake tree.
#include "stats/rapl.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace ccfs {
namespace {

namespace fs = std::filesystem;

// The N of a top-level zone named PREFIX:N (digits only, no subzone part), or -1.
long TopLevelIndex(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size(), prefix) != 0 ||
      name[prefix.size()] != ':') {
    return -1;
  }
  long n = 0;
  const char* first = name.data() + prefix.size() + 1;
  const char* last = name.data() + name.size();
  auto [end, ec] = std::from_chars(first, last, n);
  return ec == std::errc() && end == last ? n : -1;
}

// The contents of a small sysfs file, without the trailing newline.
Status ReadText(const std::string& path, std::string* text) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  char buf[256];
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
  const int err = errno;
  if (fd >= 0) close(fd);
  if (n < 0) {
    // Not NotFound even for ENOENT: a zone without its counter is a broken zone, not "no RAPL".
    return Status::IOError(
        err, fmt::format("{}: {}{}", path, std::strerror(err),
                         err == EACCES ? " (energy counters are readable only by root since "
                                         "Linux 5.10)"
                                       : ""));
  }
  text->assign(buf, static_cast<size_t>(n));
  while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
  return Status::Ok();
}

Status ReadNumber(const std::string& path, uint64_t* value) {
  std::string text;
  Status s = ReadText(path, &text);
  if (!s.ok()) return s;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a number of microjoules, got \"{}\"", path, text));
  }
  *value = v;
  return Status::Ok();
}

// The package zones named PREFIX:N under `root`, by N.
Status FindPackages(const std::string& root, const std::string& prefix,
                    std::vector<RaplReader::Domain>* out) {
  std::vector<std::pair<long, std::string>> zones;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    long n = TopLevelIndex(name, prefix);
    if (n >= 0) zones.emplace_back(n, it->path().string());
  }
  std::sort(zones.begin(), zones.end());
  for (const auto& [n, dir] : zones) {
    std::string zone_name;
    Status s = ReadText(dir + "/name", &zone_name);
    if (!s.ok()) return s;
    if (zone_name.rfind("package", 0) != 0) continue;  // psys, or a domain that is not a package
    RaplReader::Domain d;
    d.dir = dir;
    d.name = zone_name;
    s = ReadNumber(dir + "/max_energy_range_uj", &d.max_range_uj);
    if (!s.ok()) return s;
    out->push_back(std::move(d));
  }
  return Status::Ok();
}

}  // namespace

Status RaplReader::Open(const std::string& root, std::unique_ptr<RaplReader>* reader) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return Status::NotFound(fmt::format("no RAPL: {} does not exist", root));
  }
  std::vector<Domain> domains;
  Status s = FindPackages(root, "intel-rapl", &domains);
  if (s.ok() && domains.empty()) s = FindPackages(root, "intel-rapl-mmio", &domains);
  if (!s.ok()) return s;
  if (domains.empty()) {
    return Status::NotFound(fmt::format("no RAPL: no package zone under {}", root));
  }
  std::unique_ptr<RaplReader> r(new RaplReader(std::move(domains)));
  RaplSample first;
  s = r->Read(&first);  // energy_uj may be unreadable where name and the range are not
  if (!s.ok()) return s;
  *reader = std::move(r);
  return Status::Ok();
}

std::string RaplReader::Describe() const {
  std::string out;
  for (const Domain& d : domains_) out += (out.empty() ? "" : " + ") + d.name;
  return out;
}

Status RaplReader::Read(RaplSample* sample) const {
  RaplSample s;
  s.energy_uj.resize(domains_.size());
  for (size_t i = 0; i < domains_.size(); ++i) {
    Status st = ReadNumber(domains_[i].dir + "/energy_uj", &s.energy_uj[i]);
    if (!st.ok()) return st;
  }
  *sample = std::move(s);
  return Status::Ok();
}

double RaplReader::JoulesBetween(const RaplSample& before, const RaplSample& after) const {
  uint64_t total_uj = 0;
  for (size_t i = 0; i < domains_.size() && i < before.energy_uj.size() &&
                     i < after.energy_uj.size();
       ++i) {
    const uint64_t max = domains_[i].max_range_uj;
    const uint64_t a = before.energy_uj[i];
    const uint64_t b = after.energy_uj[i];
    total_uj += b >= a ? b - a : max - std::min(a, max) + b;
  }
  return static_cast<double>(total_uj) / 1e6;
}

std::string RaplReader::NoEnergyNote(const Status& why) {
  if (why.code() == Status::Code::kNotFound) return "no RAPL: CPU time only";
  return "RAPL unreadable (" + why.message() + "): CPU time only";
}

}  // namespace ccfs
