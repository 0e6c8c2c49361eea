// The content sources of the text, db, random and zero kinds (content.h); binary is in
// binary_content.cc.
#include "datagen/content.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "util/rng.h"

namespace ccfs {

namespace {

void PutLe(char* dst, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) dst[i] = static_cast<char>(value >> (8 * i));
}

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

}  // namespace

uint64_t StreamSeed(uint64_t seed, DataKind kind, uint64_t file) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(kind) * 0x632be59bd9b4e019ull +
                   file;
  return SplitMix64(&state);
}

std::unique_ptr<ContentSource> NewContentSource(uint64_t seed, DataKind kind, uint64_t index,
                                                std::vector<BinarySegment> binary_plan) {
  uint64_t stream = StreamSeed(seed, kind, index);
  switch (kind) {
    case DataKind::kText: return std::make_unique<TextSource>(stream);
    case DataKind::kBinary: return NewBinarySource(stream, std::move(binary_plan));
    case DataKind::kDb: return std::make_unique<DbSource>(stream, index);
    case DataKind::kRandom: return std::make_unique<RandomSource>(stream);
    case DataKind::kZero: return std::make_unique<ZeroSource>();
  }
  return std::make_unique<ZeroSource>();
}

}  // namespace ccfs
