#include "fuse/pins.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "ccfs/config.h"

namespace ccfs {

namespace fs = std::filesystem;

std::vector<std::string> SplitPinPaths(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(':', at);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(at, end - at);
    while (part.size() > 1 && part.back() == '/') part.pop_back();
    if (!part.empty()) out.push_back(part);
    at = end + 1;
  }
  return out;
}

Status Pins::Check(const Options& o) const {
  const std::vector<std::string> paths = SplitPinPaths(o.pin);
  if (paths.empty()) return Status::Ok();
  uint64_t bytes = 0;
  for (const std::string& p : paths) {
    const fs::path full = fs::path(dataset_) / p;
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(full, ec);
    if (ec || !fs::exists(st)) {
      return Status::InvalidArgument(
          fmt::format("pin: {}: {}", p, ec ? ec.message() : "no such file in DATASET"));
    }
    if (fs::is_regular_file(st)) {
      bytes += fs::file_size(full, ec);
      continue;
    }
    if (!fs::is_directory(st)) continue;
    fs::recursive_directory_iterator it(full, fs::directory_options::skip_permission_denied, ec);
    for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && !it->is_symlink(ec)) bytes += it->file_size(ec);
      ec.clear();
    }
  }
  const uint64_t most = o.memory / 100 * static_cast<uint64_t>(o.pin_percent);
  if (bytes > most) {
    return Status::InvalidArgument(fmt::format(
        "pin: the pinned paths hold {}; pins may take at most pin_percent = {}% of memory ({})",
        FormatSize(bytes), o.pin_percent, FormatSize(most)));
  }
  return Status::Ok();
}

void Pins::Apply(const Options& o) {
  {
    MutexLock lock(&mu_);
    if (o.pin == text_) return;
    text_ = o.pin;
    paths_ = SplitPinPaths(o.pin);
    any_.store(!paths_.empty(), std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  cache_->UnpinAll();
}

bool Pins::Matches(const std::string& path) const {
  MutexLock lock(&mu_);
  for (const std::string& p : paths_) {
    if (path == p || (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
                      path[p.size()] == '/')) {
      return true;
    }
    if (p == "." || p == "/") return true;
  }
  return false;
}

}  // namespace ccfs
