#include "trace/dataset.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "ccfs/mount_protocol.h"

namespace ccfs {

namespace fs = std::filesystem;

Status Dataset::Open(const std::string& root, uint32_t page_size, Dataset* dataset) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return Status::InvalidArgument(fmt::format("{}: not a directory{}", root,
                                               ec ? ": " + ec.message() : std::string()));
  }
  std::vector<std::pair<std::string, uint64_t>> found;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::none, ec);
  if (ec) return Status::IOError(ec.value(), fmt::format("{}: cannot list", root));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& entry = *it;
    fs::path rel = entry.path().lexically_relative(root);
    if (it.depth() == 0 && rel == kControlDirName) {
      it.disable_recursion_pending();  // a mount's control files are not data
      continue;
    }
    std::error_code type_ec;
    if (entry.is_symlink(type_ec) || !entry.is_regular_file(type_ec)) continue;
    uint64_t size = entry.file_size(type_ec);
    if (type_ec) {
      return Status::IOError(type_ec.value(), fmt::format("{}: cannot stat", entry.path().string()));
    }
    found.emplace_back(rel.generic_string(), size);
  }
  if (ec) {
    return Status::IOError(ec.value(), fmt::format("{}: cannot list beneath it: {}", root,
                                                   ec.message()));
  }
  std::sort(found.begin(), found.end());
  Dataset out = FromFiles(root, page_size, found);
  if (out.pages() == 0) {
    return Status::InvalidArgument(fmt::format("{}: holds no non-empty regular file", root));
  }
  *dataset = std::move(out);
  return Status::Ok();
}

Dataset Dataset::FromFiles(const std::string& root, uint32_t page_size,
                           const std::vector<std::pair<std::string, uint64_t>>& files) {
  Dataset out;
  out.root_ = root;
  out.page_size_ = page_size == 0 ? 8192 : page_size;
  for (const auto& [path, size] : files) {
    File file;
    file.path = path;
    file.size = size;
    out.files_.push_back(std::move(file));
  }
  out.Index();
  return out;
}

void Dataset::Index() {
  pages_ = 0;
  bytes_ = 0;
  by_path_.clear();
  for (File& file : files_) {
    by_path_.emplace(file.path, static_cast<int>(&file - files_.data()));
    file.first_page = pages_;
    file.pages = (file.size + page_size_ - 1) / page_size_;
    pages_ += file.pages;
    bytes_ += file.size;
  }
}

Dataset::PageRef Dataset::Locate(uint64_t page) const {
  // The last file whose first page is <= page and that has pages (empty files share first_page
  // with their successor; upper_bound skips past them).
  auto it = std::upper_bound(files_.begin(), files_.end(), page,
                             [](uint64_t p, const File& f) { return p < f.first_page; });
  while (it != files_.begin()) {
    --it;
    if (it->pages > 0 && page < it->first_page + it->pages) break;
  }
  PageRef ref;
  ref.file = static_cast<uint32_t>(it - files_.begin());
  ref.offset = (page - it->first_page) * page_size_;
  return ref;
}

int Dataset::Find(const std::string& path) const {
  std::string_view want = path;
  while (want.starts_with("./")) want.remove_prefix(2);
  while (want.starts_with("/")) want.remove_prefix(1);
  auto it = by_path_.find(std::string(want));
  return it == by_path_.end() ? -1 : it->second;
}

std::string Dataset::FullPath(uint32_t file) const {
  return (fs::path(root_) / files_[file].path).string();
}

}  // namespace ccfs
