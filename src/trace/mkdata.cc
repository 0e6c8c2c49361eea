#include "trace/mkdata.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "ccfs/codec.h"
#include "trace/rng.h"

namespace ccfs {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kDbPage = 8192;
constexpr uint64_t kChunk = 1 << 20;  // write unit; a multiple of every page size
constexpr uint64_t kMinFile = 4ull << 20;
constexpr uint64_t kMaxFile = 32ull << 20;
constexpr uint64_t kSamplePagesPerKind = 2048;

const char* Extension(DataKind kind) {
  switch (kind) {
    case DataKind::kText: return "txt";
    case DataKind::kBinary: return "bin";
    case DataKind::kDb: return "db";
    case DataKind::kRandom: return "rnd";
    case DataKind::kZero: return "zero";
  }
  return "dat";
}

// Per-(seed, kind, file) streams, so a file's bytes do not depend on which thread wrote it.
uint64_t StreamSeed(uint64_t seed, DataKind kind, uint64_t file) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(kind) * 0x632be59bd9b4e019ull +
                   file;
  return SplitMix64(&state);
}

void PutLe(char* dst, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) dst[i] = static_cast<char>(value >> (8 * i));
}

// A source of one file's bytes, filled in order, a chunk at a time.
class ContentSource {
 public:
  virtual ~ContentSource() = default;
  virtual void Fill(char* buf, size_t n) = 0;
};

// ---- text ---------------------------------------------------------------------------------------

// The word model shared by the text and db kinds: a fixed vocabulary (the same for every seed, so
// every seed gives text of the same statistics) with Zipf frequencies, frequent words short, and a
// few habitual followers per word. The constants were tuned so that 8 KiB pages compress like
// English prose does (documentation and licence texts measure about 1.65x with lz4 and 2.45x with
// zstd level 1; this model gives about 1.63x and 2.6x).
class Vocabulary {
 public:
  static const Vocabulary& Get() {
    static const Vocabulary vocabulary;
    return vocabulary;
  }
  // A word index by frequency alone.
  uint32_t Draw(Rng& rng) const { return table_[rng.Next() >> 48]; }
  // The word after `previous`: often one of its few habitual followers (prose repeats phrases,
  // which is what lets lz4 find matches in real text), else a fresh draw.
  uint32_t DrawAfter(uint32_t previous, Rng& rng) const {
    uint64_t r = rng.Next();
    if ((r & 0xff) < kFollowPercent * 256 / 100) return followers_[previous][(r >> 8) % kFollowers];
    return Draw(rng);
  }
  const std::string& Word(uint32_t i) const { return words_[i]; }
  const std::string& At(size_t i) const { return words_[i % words_.size()]; }
  size_t size() const { return words_.size(); }

 private:
  static constexpr int kWords = 2048;
  static constexpr int kFollowers = 3;
  static constexpr int kFollowPercent = 75;
  static constexpr double kZipfExponent = 1.15;
  Vocabulary() {
    // The commonest English function words take the top ranks, as in real prose.
    static const char* const kCommon[] = {
        "the", "of", "and", "to", "a", "in", "is", "that", "it", "for", "as", "with", "was", "on",
        "be", "by", "this", "are", "or", "not", "from", "at", "which", "an", "but", "have", "has",
        "its", "they", "were", "can", "one", "all", "their", "there", "been", "if", "more", "when",
        "will", "would", "who", "so", "no", "each", "may", "other", "than", "into", "only"};
    for (const char* w : kCommon) words_.emplace_back(w);
    static const char* const kOnsets[] = {"", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p",
                                          "r", "s", "t", "v", "w", "th", "st", "ch", "sh", "pr",
                                          "tr", "gr", "br", "cl", "sp", "qu", "fl"};
    static const char* const kVowels[] = {"a", "e", "i", "o", "u", "ea", "ou", "ai", "io", "ee"};
    static const char* const kCodas[] = {"", "", "", "n", "r", "s", "t", "l", "nd", "st", "ng",
                                         "rt", "m", "ct", "ss"};
    Rng rng(0x7e47);
    std::vector<std::string> made;
    while (words_.size() + made.size() < kWords) {
      int syllables = 1 + static_cast<int>(rng.Below(3)) + (rng.Below(4) == 0);
      std::string w;
      for (int s = 0; s < syllables; ++s) {
        w += kOnsets[rng.Below(std::size(kOnsets))];
        w += kVowels[rng.Below(std::size(kVowels))];
        w += kCodas[rng.Below(std::size(kCodas))];
      }
      made.push_back(std::move(w));
    }
    std::stable_sort(made.begin(), made.end(),
                     [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    for (auto& w : made) words_.push_back(std::move(w));
    // Quantised inverse CDF of the Zipf law over the ranks: a 16-bit draw picks a word in O(1).
    std::vector<double> cdf(words_.size());
    double total = 0;
    for (size_t r = 0; r < words_.size(); ++r) cdf[r] = (total += std::pow(r + 1.0, -kZipfExponent));
    size_t r = 0;
    for (size_t i = 0; i < table_.size(); ++i) {
      double p = (static_cast<double>(i) + 0.5) / table_.size() * total;
      while (cdf[r] < p) ++r;
      table_[i] = static_cast<uint16_t>(r);
    }
    followers_.resize(words_.size());
    for (auto& f : followers_) {
      for (uint32_t& w : f) w = Draw(rng);
    }
  }
  std::vector<std::string> words_;
  std::vector<std::array<uint32_t, kFollowers>> followers_;
  std::array<uint16_t, 65536> table_;
};

class TextSource final : public ContentSource {
 public:
  explicit TextSource(uint64_t seed) : rng_(seed), vocabulary_(Vocabulary::Get()) {}

  void Fill(char* buf, size_t n) override {
    while (pending_.size() - pos_ < n) {
      pending_.erase(0, pos_);
      pos_ = 0;
      AppendParagraph();
    }
    std::memcpy(buf, pending_.data() + pos_, n);
    pos_ += n;
  }

 private:
  void AppendWord(const std::string& word, bool capital, char after) {
    size_t len = word.size() + (after ? 1 : 0);
    if (column_ > 0 && column_ + 1 + len > 72) {
      pending_ += '\n';
      column_ = 0;
    } else if (column_ > 0) {
      pending_ += ' ';
      ++column_;
    }
    size_t start = pending_.size();
    pending_ += word;
    if (capital) pending_[start] = static_cast<char>(std::toupper(pending_[start]));
    if (after) pending_ += after;
    column_ += len;
  }

  void AppendParagraph() {
    int sentences = 2 + static_cast<int>(rng_.Below(6));
    for (int s = 0; s < sentences; ++s) {
      int words = 4 + static_cast<int>(rng_.Below(18));
      for (int w = 0; w < words; ++w) {
        char after = 0;
        if (w == words - 1) {
          uint64_t end = rng_.Below(20);
          after = end == 0 ? '?' : end == 1 ? '!' : '.';
        } else if (rng_.Below(12) == 0) {
          after = ',';
        }
        if (rng_.Below(50) == 0) {
          AppendWord(std::to_string(rng_.Below(rng_.Below(2) ? 100 : 3000)), false, after);
        } else {
          previous_ = vocabulary_.DrawAfter(previous_, rng_);
          AppendWord(vocabulary_.Word(previous_), w == 0, after);
        }
      }
    }
    pending_ += "\n\n";
    column_ = 0;
  }

  Rng rng_;
  const Vocabulary& vocabulary_;
  std::string pending_;
  size_t pos_ = 0;
  size_t column_ = 0;
  uint32_t previous_ = 0;
};

// ---- database pages -----------------------------------------------------------------------------

// Pages laid out like a relational database's: a 24-byte header (log position, checksum, flags,
// lower/upper bounds of free space, special-area offset, layout version), an array of 4-byte line
// pointers growing down the page, tuples growing up from the end, zeroed free space between.
class DbSource final : public ContentSource {
 public:
  DbSource(uint64_t seed, uint64_t file)
      : rng_(seed), vocabulary_(Vocabulary::Get()),
        row_id_(file * 50000000 + 1), index_key_(file * 50000000 + 1),
        timestamp_us_(694224000000000ull + file * 86400000000ull),  // 2022-01-01 + file days
        lsn_(0x16b3740000ull + file * 0x1000000), xid_(748 + static_cast<uint32_t>(file) * 100000) {}

  void Fill(char* buf, size_t n) override {
    for (size_t off = 0; off + kDbPage <= n; off += kDbPage) {
      char* page = buf + off;
      std::memset(page, 0, kDbPage);
      if (rng_.Below(4) == 0) {
        BtreePage(page);
      } else {
        HeapPage(page);
      }
      ++block_;
    }
  }

 private:
  void Header(char* page, uint16_t lower, uint16_t upper, uint16_t special) {
    lsn_ += 40 + rng_.Below(4000);
    PutLe(page + 0, lsn_ >> 32, 4);
    PutLe(page + 4, lsn_ & 0xffffffff, 4);
    PutLe(page + 8, rng_.Next() & 0xffff, 2);  // checksum
    PutLe(page + 10, 0x0004, 2);               // flags: all visible
    PutLe(page + 12, lower, 2);
    PutLe(page + 14, upper, 2);
    PutLe(page + 16, special, 2);
    PutLe(page + 18, kDbPage | 4, 2);          // page size | layout version
  }

  void HeapPage(char* page) {
    // Fill factor 70-100%: updated tables leave holes.
    const uint16_t limit = static_cast<uint16_t>(24 + (kDbPage - 24) * (70 + rng_.Below(31)) / 100);
    uint16_t lower = 24, upper = kDbPage;
    uint16_t item = 0;
    char tuple[256];
    for (;;) {
      size_t len = HeapTuple(tuple, item + 1);
      size_t aligned = (len + 7) & ~size_t{7};
      if (lower + 4 + aligned > upper || kDbPage - upper + aligned + lower > limit) break;
      upper = static_cast<uint16_t>(upper - aligned);
      std::memcpy(page + upper, tuple, len);
      uint32_t lp = upper | (1u << 15) | (static_cast<uint32_t>(len) << 17);  // offset|normal|len
      PutLe(page + lower, lp, 4);
      lower += 4;
      ++item;
    }
    Header(page, lower, upper, kDbPage);
  }

  // One row: tuple header, then id int64, customer int32, status int16, created_at timestamp,
  // amount int64 (cents), name and city as short variable-length text.
  size_t HeapTuple(char* t, uint16_t item) {
    if (rng_.Below(40) == 0) ++xid_;
    std::memset(t, 0, 24);
    PutLe(t + 0, xid_, 4);                                       // inserting transaction
    PutLe(t + 4, rng_.Below(30) == 0 ? xid_ + 1 + rng_.Below(500) : 0, 4);  // deleter, if any
    PutLe(t + 10, block_, 4);                                    // self pointer: block, item
    PutLe(t + 14, item, 2);
    PutLe(t + 16, 7, 2);                                         // attributes
    PutLe(t + 18, 0x0902, 2);                                    // infomask: committed, varwidth
    t[22] = 24;                                                  // header length
    size_t p = 24;
    PutLe(t + p, row_id_++, 8);
    p += 8;
    PutLe(t + p, 1 + rng_.Below(rng_.Below(4) ? 5000 : 200000), 4);  // customer: some are regulars
    p += 4;
    static const uint16_t kStatus[] = {1, 1, 1, 1, 1, 2, 2, 3, 4, 9};
    PutLe(t + p, kStatus[rng_.Below(10)], 2);
    p += 4;                                                      // +2 pad to 8
    timestamp_us_ += rng_.Below(2000000);
    PutLe(t + p, timestamp_us_, 8);
    p += 8;
    double amount = std::exp(3.0 + 2.0 * rng_.NextDouble() + rng_.NextDouble());
    PutLe(t + p, static_cast<uint64_t>(amount * 100), 8);
    p += 8;
    p += Text(t + p, 2);
    p += Text(t + p, 1);
    return p;
  }

  // `words` capitalised words as a 1-byte-header varlena.
  size_t Text(char* t, int words) {
    std::string s;
    for (int i = 0; i < words; ++i) {
      if (i) s += ' ';
      std::string w = vocabulary_.At(50 + rng_.Below(i == 0 ? 1500 : 400));
      w[0] = static_cast<char>(std::toupper(w[0]));
      s += w;
    }
    if (s.size() > 100) s.resize(100);
    t[0] = static_cast<char>(((s.size() + 1) << 1) | 1);
    std::memcpy(t + 1, s.data(), s.size());
    return s.size() + 1;
  }

  // A leaf page of an index on the row id: tuples of (heap block, item, size, int64 key), keys
  // ascending, and a special area naming the sibling pages.
  void BtreePage(char* page) {
    constexpr uint16_t kSpecial = kDbPage - 16;
    const uint16_t limit = static_cast<uint16_t>(24 + (kSpecial - 24) * (60 + rng_.Below(41)) / 100);
    uint16_t lower = 24, upper = kSpecial;
    while (lower + 4 + 16 <= upper && (kSpecial - upper) + lower + 20 <= limit) {
      upper -= 16;
      char* t = page + upper;
      index_key_ += 1 + (rng_.Below(8) == 0 ? rng_.Below(20) : 0);
      uint64_t heap_block = index_key_ / 80;
      PutLe(t + 0, heap_block >> 16, 2);
      PutLe(t + 2, heap_block & 0xffff, 2);
      PutLe(t + 4, 1 + index_key_ % 80, 2);
      PutLe(t + 6, 16, 2);
      PutLe(t + 8, index_key_, 8);
      PutLe(page + lower, upper | (1u << 15) | (16u << 17), 4);
      lower += 4;
    }
    Header(page, lower, upper, kSpecial);
    char* special = page + kSpecial;
    PutLe(special + 0, block_ ? block_ - 1 : 0, 4);  // left sibling
    PutLe(special + 4, block_ + 1, 4);               // right sibling
    PutLe(special + 8, 0, 4);                        // level: leaf
    PutLe(special + 12, 1, 2);                       // flags: leaf
  }

  Rng rng_;
  const Vocabulary& vocabulary_;
  uint64_t row_id_;
  uint64_t index_key_;
  uint64_t timestamp_us_;
  uint64_t lsn_;
  uint32_t xid_;
  uint32_t block_ = 0;
};

// ---- random and zero ----------------------------------------------------------------------------

class RandomSource final : public ContentSource {
 public:
  explicit RandomSource(uint64_t seed) : rng_(seed) {}
  void Fill(char* buf, size_t n) override {
    for (size_t i = 0; i + 8 <= n; i += 8) {
      uint64_t v = rng_.Next();
      std::memcpy(buf + i, &v, 8);
    }
  }

 private:
  Rng rng_;
};

class ZeroSource final : public ContentSource {
 public:
  void Fill(char* buf, size_t n) override { std::memset(buf, 0, n); }
};

// ---- binary -------------------------------------------------------------------------------------

struct BinarySegment {
  std::string path;  // empty: synthetic code
  uint64_t offset = 0;
  uint64_t length = 0;
};

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

// ---- the build ----------------------------------------------------------------------------------

struct FileJob {
  DataKind kind;
  uint64_t index;       // file number within its kind
  uint64_t size;
  uint64_t first_page;  // page number within its kind, for sampling
  std::string path;
  std::vector<BinarySegment> binary_plan;
};

struct RatioSums {
  uint64_t pages = 0, in = 0, lz4_out = 0, zstd_out = 0;
};

std::unique_ptr<ContentSource> NewSource(uint64_t seed, FileJob& job) {
  uint64_t stream = StreamSeed(seed, job.kind, job.index);
  switch (job.kind) {
    case DataKind::kText: return std::make_unique<TextSource>(stream);
    case DataKind::kBinary: return std::make_unique<BinarySource>(stream, std::move(job.binary_plan));
    case DataKind::kDb: return std::make_unique<DbSource>(stream, job.index);
    case DataKind::kRandom: return std::make_unique<RandomSource>(stream);
    case DataKind::kZero: return std::make_unique<ZeroSource>();
  }
  return std::make_unique<ZeroSource>();
}

const std::regex& OurFileName() {
  static const std::regex re("(text|binary|db|random|zero)-[0-9]+\\.(txt|bin|db|rnd|zero)");
  return re;
}

Status PrepareDirectory(const MkdataOptions& options) {
  std::error_code ec;
  if (fs::exists(options.dir, ec) && !fs::is_directory(options.dir, ec)) {
    return Status::InvalidArgument(fmt::format("{}: exists and is not a directory", options.dir));
  }
  fs::create_directories(options.dir, ec);
  if (ec) return Status::IOError(ec.value(), fmt::format("{}: cannot create: {}", options.dir, ec.message()));
  std::vector<fs::path> ours;
  bool others = false;
  for (auto it = fs::directory_iterator(options.dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (std::regex_match(it->path().filename().string(), OurFileName()) && it->is_regular_file()) {
      ours.push_back(it->path());
    } else {
      others = true;
    }
  }
  if (ec) return Status::IOError(ec.value(), fmt::format("{}: cannot list: {}", options.dir, ec.message()));
  if ((others || !ours.empty()) && !options.force) {
    return Status::InvalidArgument(fmt::format(
        "{}: directory is not empty; use --force to replace a data set made by mkdata", options.dir));
  }
  if (others && options.on_warning) {
    options.on_warning(fmt::format(
        "{}: holds entries mkdata did not make; they are kept and will be part of the data set",
        options.dir));
  }
  for (const fs::path& p : ours) {
    fs::remove(p, ec);
    if (ec) return Status::IOError(ec.value(), fmt::format("{}: cannot remove: {}", p.string(), ec.message()));
  }
  return Status::Ok();
}

}  // namespace

const char* DataKindName(DataKind kind) {
  switch (kind) {
    case DataKind::kText: return "text";
    case DataKind::kBinary: return "binary";
    case DataKind::kDb: return "db";
    case DataKind::kRandom: return "random";
    case DataKind::kZero: return "zero";
  }
  return "?";
}

Status ParseMix(const std::string& text, std::vector<MixEntry>* mix) {
  std::vector<MixEntry> out;
  std::array<bool, kDataKinds> seen{};
  int total = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos) {
      return Status::InvalidArgument(fmt::format("--mix {}: item '{}' is not KIND=PERCENT", text, item));
    }
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    int kind = -1;
    for (int k = 0; k < kDataKinds; ++k) {
      if (name == DataKindName(static_cast<DataKind>(k))) kind = k;
    }
    if (kind < 0) {
      return Status::InvalidArgument(fmt::format(
          "--mix {}: unknown kind '{}' (text, binary, db, random, zero)", text, name));
    }
    if (seen[kind]) return Status::InvalidArgument(fmt::format("--mix {}: '{}' given twice", text, name));
    seen[kind] = true;
    char* end = nullptr;
    long percent = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || percent < 0 || percent > 100) {
      return Status::InvalidArgument(fmt::format(
          "--mix {}: '{}' for {} is not a whole percentage 0..100", text, value, name));
    }
    total += static_cast<int>(percent);
    if (percent > 0) out.push_back({static_cast<DataKind>(kind), static_cast<int>(percent)});
  }
  if (total != 100) {
    return Status::InvalidArgument(fmt::format("--mix {}: percentages add up to {}, not 100", text, total));
  }
  *mix = std::move(out);
  return Status::Ok();
}

Status MakeDataset(const MkdataOptions& options, std::vector<KindReport>* report) {
  std::vector<MixEntry> mix = options.mix;
  if (mix.empty()) {
    Status s = ParseMix(kDefaultMix, &mix);
    if (!s.ok()) return s;
  }
  const uint32_t page = options.page_size;
  if (page < 4096 || page > (128u << 10) || (page & (page - 1)) != 0) {
    return Status::InvalidArgument(fmt::format(
        "--page-size {}: must be a power of two from 4 KiB to 128 KiB", page));
  }
  if (options.size < kDbPage) {
    return Status::InvalidArgument(fmt::format("--size {}: must be at least 8 KiB", options.size));
  }
  Status s = PrepareDirectory(options);
  if (!s.ok()) return s;

  // Split the size by kind (multiples of 8 KiB; the last kind takes the rounding), then each kind
  // into files of 4..32 MiB drawn from the seed.
  std::vector<FileJob> jobs;
  std::vector<KindReport> reports;
  uint64_t assigned = 0;
  for (size_t m = 0; m < mix.size(); ++m) {
    uint64_t bytes = m + 1 == mix.size() ? options.size - assigned
                                         : options.size / 100 * mix[m].percent / kDbPage * kDbPage;
    bytes = bytes / kDbPage * kDbPage;
    assigned += bytes;
    KindReport r;
    r.kind = mix[m].kind;
    r.bytes = bytes;
    Rng sizes(StreamSeed(options.seed, mix[m].kind, ~1ull));
    uint64_t left = bytes, index = 0, first_page = 0;
    std::vector<uint64_t> file_sizes;
    while (left > 0) {
      uint64_t size = (kMinFile + sizes.Below(kMaxFile - kMinFile + 1)) / kDbPage * kDbPage;
      if (left < size + kMinFile / 2) size = left;  // no tiny tail file
      FileJob job;
      job.kind = mix[m].kind;
      job.index = index;
      job.size = size;
      job.first_page = first_page;
      job.path = (fs::path(options.dir) /
                  fmt::format("{}-{:03}.{}", DataKindName(job.kind), index, Extension(job.kind)))
                     .string();
      file_sizes.push_back(size);
      jobs.push_back(std::move(job));
      left -= size;
      first_page += size / page;
      ++index;
    }
    r.files = static_cast<int>(index);
    if (r.kind == DataKind::kBinary) {
      auto plan = PlanBinaries(options.seed, file_sizes, &r.source);
      for (size_t i = 0; i < plan.size(); ++i) jobs[jobs.size() - plan.size() + i].binary_plan = std::move(plan[i]);
    } else {
      static const char* const kSources[] = {"seeded word model", "", "seeded heap and b-tree pages",
                                             "seeded random bytes", "zero bytes"};
      r.source = kSources[static_cast<int>(r.kind)];
    }
    reports.push_back(r);
  }

  // Sample every stride-th page of a kind for the ratio: about kSamplePagesPerKind pages.
  std::array<uint64_t, kDataKinds> stride{};
  for (const KindReport& r : reports) {
    stride[static_cast<int>(r.kind)] = std::max<uint64_t>(1, r.bytes / page / kSamplePagesPerKind);
  }

  std::mutex mu;  // guards sums, first_error, on_file
  std::array<RatioSums, kDataKinds> sums{};
  Status first_error;
  std::atomic<size_t> next_job{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    std::unique_ptr<Codec> lz4 = NewCodec(CodecKind::kLz4, 1);
    std::unique_ptr<Codec> zstd = NewCodec(CodecKind::kZstd, 1);
    std::vector<char> out(std::max(lz4->Bound(page), zstd->Bound(page)));
    auto buffer = std::make_unique<char[]>(kChunk);
    for (;;) {
      size_t j = next_job.fetch_add(1);
      if (j >= jobs.size() || failed.load()) return;
      FileJob& job = jobs[j];
      const int k = static_cast<int>(job.kind);
      std::unique_ptr<ContentSource> source = NewSource(options.seed, job);
      Status st;
      RatioSums local;
      int fd = ::open(job.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) st = Status::FromErrno(errno, job.path);
      for (uint64_t done = 0; st.ok() && done < job.size;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, job.size - done));
        source->Fill(buffer.get(), n);
        for (size_t p = 0; p + page <= n; p += page) {
          uint64_t kind_page = job.first_page + (done + p) / page;
          if (kind_page % stride[k] != 0) continue;
          local.pages++;
          local.in += page;
          // Compress() returns 0 only when the output does not fit: count the page as stored raw.
          size_t c = lz4->Compress(buffer.get() + p, page, out.data(), out.size());
          local.lz4_out += c ? c : page;
          c = zstd->Compress(buffer.get() + p, page, out.data(), out.size());
          local.zstd_out += c ? c : page;
        }
        for (size_t w = 0; w < n;) {
          ssize_t r = ::write(fd, buffer.get() + w, n - w);
          if (r < 0 && errno == EINTR) continue;
          if (r < 0) {
            st = Status::FromErrno(errno, job.path);
            break;
          }
          w += static_cast<size_t>(r);
        }
        done += n;
      }
      if (fd >= 0) {
        // Leave the data set on the device, not in the page cache: replays start cold.
        if (st.ok() && ::fdatasync(fd) != 0) st = Status::FromErrno(errno, job.path);
        if (st.ok()) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (::close(fd) != 0 && st.ok()) st = Status::FromErrno(errno, job.path);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (!st.ok()) {
        if (first_error.ok()) first_error = st;
        failed = true;
        return;
      }
      sums[k].pages += local.pages;
      sums[k].in += local.in;
      sums[k].lz4_out += local.lz4_out;
      sums[k].zstd_out += local.zstd_out;
      if (options.on_file) options.on_file(job.path, job.size);
    }
  };
  int threads = std::max(1, options.threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (!first_error.ok()) return first_error;

  for (KindReport& r : reports) {
    const RatioSums& sum = sums[static_cast<int>(r.kind)];
    r.pages_sampled = sum.pages;
    r.lz4_ratio = sum.lz4_out ? static_cast<double>(sum.in) / sum.lz4_out : 0;
    r.zstd_ratio = sum.zstd_out ? static_cast<double>(sum.in) / sum.zstd_out : 0;
  }
  *report = std::move(reports);
  return Status::Ok();
}

}  // namespace ccfs
