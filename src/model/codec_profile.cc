// The codec measurement (see codec_profile.h): each sampled page compressed as the evictor
// compresses it, then decompressed, timed both ways.
#include "model/codec_profile.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace ccfs {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `pass` (which handles `per_pass` pages) until at least `min_seconds` have gone by, at least
// once; returns the mean µs per page.
template <typename Pass>
double TimePerPage(size_t per_pass, double min_seconds, Pass pass) {
  if (per_pass == 0) return 0;
  const auto start = Clock::now();
  uint64_t pages = 0;
  do {
    pass();
    pages += per_pass;
  } while (SecondsSince(start) < min_seconds);
  return SecondsSince(start) * 1e6 / static_cast<double>(pages);
}

bool AllZero(const std::vector<char>& page) {
  return std::find_if(page.begin(), page.end(), [](char c) { return c != 0; }) == page.end();
}

}  // namespace

Status MeasureCodec(const PageSample& sample, CodecKind kind, int level, double min_savings_percent,
                    double min_seconds, const TierCharges& charges, CodecProfile* profile) {
  *profile = CodecProfile();
  profile->codec = kind;
  profile->level = level;
  if (sample.data.empty()) return Status::Ok();
  std::unique_ptr<Codec> codec = NewCodec(kind, level);
  const size_t n = sample.data.size();
  std::vector<std::vector<char>> blobs(n);  // empty: not kept (zero pages are kept, with no blob)
  std::vector<bool> zero(n);
  std::vector<char> out;
  // One pass as the evictor makes it (cache/evictor.cc CompressChunk): a zero page needs no blob;
  // any other page is compressed into a cap below which it is kept.
  auto compress_pass = [&](bool keep) {
    for (size_t i = 0; i < n; ++i) {
      const std::vector<char>& page = sample.data[i];
      if (AllZero(page)) {
        zero[i] = true;
        continue;
      }
      const size_t cap = static_cast<size_t>(page.size() * (1.0 - min_savings_percent / 100.0));
      if (out.size() < codec->Bound(page.size())) out.resize(codec->Bound(page.size()));
      const size_t size = cap > 0 ? codec->Compress(page.data(), page.size(), out.data(), cap) : 0;
      if (keep) blobs[i].assign(out.data(), out.data() + size);
    }
  };
  compress_pass(true);
  profile->compress_us = TimePerPage(n, min_seconds, [&] { compress_pass(false); });

  double logical = 0, charged = 0;
  uint64_t kept = 0, zeros = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<char>& page = sample.data[i];
    if (zero[i]) {
      ++zeros;
      charged += charges.zero_page;
    } else if (!blobs[i].empty()) {
      std::vector<char> back(page.size());
      Status s = codec->Decompress(blobs[i].data(), blobs[i].size(), back.data(), back.size());
      if (!s.ok() || back != page) {
        return Status::Corruption(fmt::format("{} level {}: sampled page {} does not decode to its "
                                              "bytes", CodecName(kind), level, sample.pages[i]));
      }
      charged += charges.blob(blobs[i].size());
    } else {
      continue;
    }
    ++kept;
    logical += page.size();
  }
  profile->storable_fraction = static_cast<double>(kept) / n;
  profile->zero_fraction = static_cast<double>(zeros) / n;
  profile->ratio = charged > 0 ? logical / charged : 1.0;
  // A compressed hit decompresses a blob, or fills a zero page.
  std::vector<char> back;
  profile->decompress_us = TimePerPage(kept, min_seconds, [&] {
    for (size_t i = 0; i < n; ++i) {
      const std::vector<char>& page = sample.data[i];
      if (back.size() < page.size()) back.resize(page.size());
      if (zero[i]) {
        std::memset(back.data(), 0, page.size());
      } else if (!blobs[i].empty()) {
        (void)codec->Decompress(blobs[i].data(), blobs[i].size(), back.data(), page.size());
      }
    }
  });
  return Status::Ok();
}

double MeasureCopyUs(const PageSample& sample, double min_seconds) {
  if (sample.data.empty()) return 0;
  std::vector<char> to(sample.data[0].size());
  return TimePerPage(sample.data.size(), min_seconds, [&] {
    for (const std::vector<char>& page : sample.data) {
      if (to.size() < page.size()) to.resize(page.size());
      std::memcpy(to.data(), page.data(), page.size());
      // Keep the copy from being optimised away.
      asm volatile("" : : "r"(to.data()) : "memory");
    }
  });
}

}  // namespace ccfs
