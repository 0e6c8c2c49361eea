// libFuzzer target: the cache file reader (cache/cache_file.h), and the restore of what it accepts.
//
// Input layout: the first byte holds flags, the rest is the file. Flag bit 0: the harness rewrites
// each record's checksum (and bit 1: the header's) to match its bytes before the file is read, so
// that inputs reach the checks behind the checksums, which random bytes would never pass.
// Properties checked beyond "no crash, no sanitizer report": a file VerifyCacheFile accepts reads
// again record for record to the same counts, ending with the end record; every accepted record
// keeps the format's promises (a plain relative path, a page length in 1..page_size, a known
// codec or a zero page, compressed bytes shorter than the page); an accepted page restored into a
// real PageCache is then read as its length in bytes, whatever its blob holds.
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "cache/cache_file.h"
#include "ccfs/codec.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace {

constexpr uint32_t kPageSize = 4096;
constexpr uint64_t kDataset = 42;

void Check(bool cond) {
  if (!cond) abort();
}

void Put64(std::string* s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}
uint32_t Get32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Rewrites the checksums the flags ask for, walking the records as the layout places them.
void FixChecksums(std::string* f, uint8_t flags) {
  if (f->size() < 64) return;
  if (flags & 2) Put64(f, 56, XXH3_64bits(f->data(), 56));
  if (!(flags & 1)) return;
  for (size_t at = 64; at + 8 <= f->size();) {
    const uint64_t len = Get32(*f, at + 4);
    if (at + 8 + len + 8 > f->size()) return;
    Put64(f, at + 8 + len, XXH3_64bits(f->data() + at, 8 + len));
    at += 8 + len + 8;
  }
}

ccfs::PageCache& Cache() {
  static ccfs::PageCache* cache = [] {
    ccfs::Options o;
    o.memory = 4 << 20;
    o.page_size = kPageSize;
    o.compressed_percent = 50;
    o.compress_threads = 1;
    o.estimate_splits = false;
    std::unique_ptr<ccfs::PageCache> c;
    Check(ccfs::PageCache::Create(o, &c).ok());
    return c.release();
  }();
  return *cache;
}

bool PlainPath(const std::string& p) {
  if (p.empty() || p[0] == '/' || p.find('\0') != std::string::npos) return false;
  for (size_t start = 0; start <= p.size();) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    const std::string part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string file(reinterpret_cast<const char*>(data + 1), size - 1);
  FixChecksums(&file, data[0]);
  const int fd = memfd_create("cache", MFD_CLOEXEC);
  Check(fd >= 0);
  Check(write(fd, file.data(), file.size()) == static_cast<ssize_t>(file.size()));

  ccfs::cache::CacheFileSummary summary;
  const ccfs::Status verified = ccfs::cache::VerifyCacheFile(fd, kPageSize, kDataset, &summary);
  if (!verified.ok()) {
    Check(!verified.message().empty());
    close(fd);
    return 0;
  }
  ccfs::cache::CacheFileReader reader(fd, kPageSize, kDataset);
  Check(reader.ReadHeader().ok());
  uint64_t files = 0, pages = 0;
  uint64_t file_id = 0;
  ccfs::PageCache& cache = Cache();
  std::string out(kPageSize, '\0');
  for (;;) {
    ccfs::cache::CacheFileReader::Kind kind;
    Check(reader.Next(&kind).ok());
    if (kind == ccfs::cache::CacheFileReader::Kind::kEnd) break;
    if (kind == ccfs::cache::CacheFileReader::Kind::kFile) {
      ++files;
      Check(PlainPath(reader.file().path));
      file_id = reader.file().file_id;
      continue;
    }
    ++pages;
    const ccfs::cache::CachedPageRecord& p = reader.page();
    Check(p.length >= 1 && p.length <= kPageSize);
    const bool zero = p.codec == ccfs::cache::kZeroPage;
    Check(zero ? p.bytes.empty() : (p.codec <= 1 && !p.bytes.empty() && p.bytes.size() < p.length));
    const auto codec = zero ? ccfs::CodecKind::kLz4 : static_cast<ccfs::CodecKind>(p.codec);
    // Restored under a page number of its own, then read from the tiers alone: a blob that does
    // not decode leaves the page missing, never a wrong length or a crash.
    const uint64_t page_no = pages;
    cache.InvalidateFile(file_id, page_no * kPageSize);
    const auto r = cache.Restore(file_id, page_no, p.length, zero, codec, p.bytes.data(),
                                 p.bytes.size(), cache.ChangeEpoch());
    size_t n = 0;
    bool whole = false;
    Check(cache.TryRead(file_id, page_no * kPageSize, kPageSize, out.data(), &n, &whole).ok());
    if (r == ccfs::PageCache::Restored::kRestored && whole) Check(n == p.length);
    if (zero && whole) Check(std::all_of(out.begin(), out.begin() + n, [](char c) { return !c; }));
  }
  Check(files == summary.files && pages == summary.pages);
  close(fd);
  return 0;
}
