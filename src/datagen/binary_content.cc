// The binary kind's content (content.h): executables and shared libraries of this machine, or a
// seeded imitation of machine code where none are readable.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "datagen/content.h"
#include "util/rng.h"

namespace ccfs {

namespace fs = std::filesystem;

namespace {

// ---- binary -------------------------------------------------------------------------------------

// Executables and libraries of this machine, sorted by path: the ELF files under /usr/bin and
// the shared objects under /usr/lib, at least 16 KiB each.
std::vector<std::pair<std::string, uint64_t>> ListMachineBinaries() {
  std::vector<std::pair<std::string, uint64_t>> found;
  auto consider = [&](const fs::directory_entry& entry, bool need_so) {
    std::error_code ec;
    if (entry.is_symlink(ec) || !entry.is_regular_file(ec)) return;
    uint64_t size = entry.file_size(ec);
    if (ec || size < 16384) return;
    std::string path = entry.path().string();
    if (need_so && entry.path().filename().string().find(".so") == std::string::npos) return;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char magic[4];
    bool elf = ::pread(fd, magic, 4, 0) == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
    ::close(fd);
    if (elf) found.emplace_back(path, size);
  };
  std::error_code ec;
  for (auto it = fs::directory_iterator("/usr/bin", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    consider(*it, false);
  }
  ec.clear();
  for (auto it = fs::recursive_directory_iterator("/usr/lib", fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    consider(*it, true);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Bytes shaped like x86-64 code: common opcodes, small displacements, little-endian addresses,
// and runs of padding, for machines without readable binaries (and for vanished files).
void FillSyntheticCode(Rng& rng, char* buf, size_t n) {
  static const uint8_t kOps[] = {0x48, 0x89, 0x8b, 0xe8, 0x0f, 0x85, 0x84, 0x74, 0x75, 0xc3,
                                 0x41, 0x4c, 0x83, 0xc7, 0x31, 0xc0, 0xff, 0x55, 0x5d, 0x90};
  size_t i = 0;
  while (i < n) {
    uint64_t r = rng.Next();
    switch (r & 7) {
      case 0: case 1: case 2: case 3:
        buf[i++] = static_cast<char>(kOps[(r >> 8) % std::size(kOps)]);
        break;
      case 4: case 5: {  // a 32-bit displacement, mostly small
        uint32_t d = static_cast<uint32_t>((r >> 16) & ((r & 8) ? 0xff : 0xffff));
        for (int b = 0; b < 4 && i < n; ++b) buf[i++] = static_cast<char>(d >> (8 * b));
        break;
      }
      case 6:
        buf[i++] = static_cast<char>(r >> 24);
        break;
      default: {
        size_t pad = (r >> 8) % 12;
        for (size_t b = 0; b < pad && i < n; ++b) buf[i++] = (r & 8) ? 0x00 : static_cast<char>(0xcc);
      }
    }
  }
}

class BinarySource final : public ContentSource {
 public:
  BinarySource(uint64_t seed, std::vector<BinarySegment> plan) : rng_(seed), plan_(std::move(plan)) {}
  ~BinarySource() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void Fill(char* buf, size_t n) override {
    while (n > 0) {
      if (segment_ >= plan_.size()) {  // plan exhausted (cannot happen when sizes add up)
        FillSyntheticCode(rng_, buf, n);
        return;
      }
      const BinarySegment& seg = plan_[segment_];
      size_t take = static_cast<size_t>(std::min<uint64_t>(n, seg.length - done_));
      if (seg.path.empty() || !ReadSegment(seg, buf, take)) FillSyntheticCode(rng_, buf, take);
      buf += take;
      n -= take;
      done_ += take;
      if (done_ == seg.length) {
        ++segment_;
        done_ = 0;
      }
    }
  }

 private:
  bool ReadSegment(const BinarySegment& seg, char* buf, size_t n) {
    if (open_path_ != seg.path) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = ::open(seg.path.c_str(), O_RDONLY | O_CLOEXEC);
      open_path_ = seg.path;
    }
    if (fd_ < 0) return false;
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd_, buf + got, n - got, seg.offset + done_ + got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;  // the file shrank since it was listed
      got += static_cast<size_t>(r);
    }
    return true;
  }

  Rng rng_;
  std::vector<BinarySegment> plan_;
  size_t segment_ = 0;
  uint64_t done_ = 0;
  std::string open_path_;
  int fd_ = -1;
};

}  // namespace

// Plans which pieces of which machine binaries make up each output file, in one sequential pass
// over the seed-shuffled list, so parallel writers get the same bytes as a single writer.
std::vector<std::vector<BinarySegment>> PlanBinaries(uint64_t seed,
                                                     const std::vector<uint64_t>& file_sizes,
                                                     std::string* source) {
  std::vector<std::pair<std::string, uint64_t>> binaries = ListMachineBinaries();
  Rng rng(StreamSeed(seed, DataKind::kBinary, ~0ull));
  for (size_t i = binaries.size(); i > 1; --i) std::swap(binaries[i - 1], binaries[rng.Below(i)]);
  std::vector<std::vector<BinarySegment>> plan(file_sizes.size());
  size_t next = 0;
  uint64_t used_in_current = 0;
  uint64_t distinct_bytes = 0;
  size_t files_used = 0;
  for (size_t f = 0; f < file_sizes.size(); ++f) {
    uint64_t left = file_sizes[f];
    while (left > 0) {
      if (binaries.empty()) {
        plan[f].push_back({"", 0, left});
        break;
      }
      const auto& [path, size] = binaries[next % binaries.size()];
      uint64_t take = std::min(left, size - used_in_current);
      plan[f].push_back({path, used_in_current, take});
      if (next < binaries.size()) distinct_bytes += take;
      used_in_current += take;
      left -= take;
      if (used_in_current == size) {
        ++next;
        used_in_current = 0;
      }
    }
  }
  files_used = std::min(next + 1, binaries.size());
  if (binaries.empty()) {
    *source = "synthetic machine code (no ELF file readable under /usr/bin, /usr/lib)";
  } else {
    *source = fmt::format("{} ELF files of this machine (/usr/bin, /usr/lib){}", files_used,
                          next >= binaries.size() ? ", reused" : "");
  }
  (void)distinct_bytes;
  return plan;
}

std::unique_ptr<ContentSource> NewBinarySource(uint64_t stream_seed,
                                               std::vector<BinarySegment> plan) {
  return std::make_unique<BinarySource>(stream_seed, std::move(plan));
}

}  // namespace ccfs
