// MakeDataset: builds a reproducible data set of known kinds for replays (`ccfs mkdata`).
//
// Five kinds of data, chosen because they compress very differently at page granularity:
//   text    English-like prose from a seeded word model: common English function words and
//           pronounceable pseudo-words with Zipf frequencies and habitual followers (phrases),
//           sentences, paragraphs, 72-column lines; it compresses like real prose.
//   binary  executables and shared libraries of this machine (/usr/bin, /usr/lib), sorted by path
//           and picked with the seed; if none are readable, a seeded imitation of machine code.
//   db      database pages of 8 KiB: heap pages (page header, line pointers, tuples of integer,
//           timestamp, status, amount and text columns, free space zeroed) and b-tree leaf pages
//           (sorted int64 keys with tuple pointers), three heap pages to one index page.
//   random  seeded random bytes: incompressible.
//   zero    zero bytes.
// Every kind except binary is a pure function of (seed, kind, file number, size): the same command
// gives the same bytes on any machine. Binary depends on the installed packages.
//
// Files are named KIND-NNN.EXT, a few MiB to tens of MiB each (sizes drawn from the seed), every
// size a multiple of 8 KiB. After writing, each kind's lz4 and zstd ratio is measured on a
// deterministic sample of pages at the requested page size.
//
// Layout: mkdata.cc is the driver (planning, writing, ratio sampling); content.h the sources of
// bytes (content.cc: text, db, random, zero; binary_content.cc: binary).
//
// Thread-safety: MakeDataset may run concurrently with itself on different directories.
#ifndef CCFS_DATAGEN_MKDATA_H_
#define CCFS_DATAGEN_MKDATA_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ccfs/status.h"

namespace ccfs {

enum class DataKind { kText = 0, kBinary, kDb, kRandom, kZero };
inline constexpr int kDataKinds = 5;

// "text", "binary", "db", "random", "zero".
const char* DataKindName(DataKind kind);

struct MixEntry {
  DataKind kind;
  int percent;  // share of the total size
};

// Parses "text=30,binary=20,db=30,random=10,zero=10". Kinds may be left out (0%); the percentages
// must add up to 100. Errors name the item.
Status ParseMix(const std::string& text, std::vector<MixEntry>* mix);
// The default mix, as text.
inline constexpr const char* kDefaultMix = "text=30,binary=20,db=30,random=10,zero=10";

struct MkdataOptions {
  std::string dir;
  uint64_t size = 1ull << 30;  // total bytes
  std::vector<MixEntry> mix;   // empty = kDefaultMix
  uint64_t seed = 1;
  uint32_t page_size = 8192;   // for the ratio measurement
  bool force = false;          // write into a non-empty directory
  int threads = 2;             // files written in parallel
  // Called after each file is written (from the writing thread, serialised): path and size.
  std::function<void(const std::string& path, uint64_t bytes)> on_file;
  // Called with a warning worth showing the user (e.g. foreign files kept under --force).
  std::function<void(const std::string& message)> on_warning;
};

struct KindReport {
  DataKind kind;
  int files = 0;
  uint64_t bytes = 0;
  uint64_t pages_sampled = 0;
  double lz4_ratio = 0;   // sampled bytes / lz4 (level 1) bytes
  double zstd_ratio = 0;  // sampled bytes / zstd (level 1) bytes
  std::string source;     // where the bytes came from, for the report
};

// Creates options.dir if needed. A directory that already holds entries is refused unless
// options.force; with force, files named like ours (KIND-NNN.EXT) are removed first and other
// entries are kept (with a warning: they become part of the data set).
Status MakeDataset(const MkdataOptions& options, std::vector<KindReport>* report);

}  // namespace ccfs

#endif  // CCFS_DATAGEN_MKDATA_H_
