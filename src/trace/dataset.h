// Dataset: the data set a replay reads, seen as one array of pages.
//
// Lists every regular file beneath a directory (recursively, sorted by relative path, so the same
// tree gives the same page numbering on every run and machine), skipping symbolic links and the
// control directory ".ccfs" of a mount. Each file contributes ceil(size / page_size) pages; the
// global page index runs through the files in order. Locate() maps a global page to (file, offset).
//
// Thread-safety: immutable after Open/FromFiles; every const method may be called from any thread.
#ifndef CCFS_TRACE_DATASET_H_
#define CCFS_TRACE_DATASET_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ccfs/status.h"

namespace ccfs {

class Dataset {
 public:
  struct File {
    std::string path;     // relative to root(), '/'-separated
    uint64_t size = 0;    // bytes
    uint64_t first_page = 0;
    uint64_t pages = 0;   // ceil(size / page_size)
  };
  struct PageRef {
    uint32_t file = 0;    // index into files()
    uint64_t offset = 0;  // byte offset of the page within that file
  };

  Dataset() = default;

  // Scans `root`. Errors: root missing or not a directory, an unreadable subdirectory (named), or a
  // tree with no non-empty regular file. REQUIRES: page_size > 0.
  static Status Open(const std::string& root, uint32_t page_size, Dataset* dataset);
  // A data set from a list of (relative path, size), kept in the given order (for tests and for
  // traces whose files are known only by name).
  static Dataset FromFiles(const std::string& root, uint32_t page_size,
                           const std::vector<std::pair<std::string, uint64_t>>& files);

  const std::string& root() const { return root_; }
  uint32_t page_size() const { return page_size_; }
  const std::vector<File>& files() const { return files_; }
  uint64_t pages() const { return pages_; }
  uint64_t bytes() const { return bytes_; }

  // REQUIRES: page < pages().
  PageRef Locate(uint64_t page) const;
  // Index of the file with relative path `path` (a leading "./" or "/" is ignored), or -1.
  int Find(const std::string& path) const;
  // root()/files()[file].path
  std::string FullPath(uint32_t file) const;

 private:
  void Index();

  std::string root_;
  uint32_t page_size_ = 8192;
  std::vector<File> files_;
  std::unordered_map<std::string, int> by_path_;
  uint64_t pages_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace ccfs

#endif  // CCFS_TRACE_DATASET_H_
