// Reads through a mount return the dataset's bytes, whatever the tier split, and the counters in
// stats.json add up.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

constexpr size_t kDatasetBytes = 6 << 20;  // six times the memory budget below

class ReadThroughMountTest : public MountTest, public ::testing::WithParamInterface<int> {};

uint64_t Counter(const nlohmann::json& stats, const char* key) {
  return stats.contains(key) ? stats[key].get<uint64_t>() : 0;
}

TEST_P(ReadThroughMountTest, EveryFileReadsBackIdenticalAndCountersAddUp) {
  std::vector<std::string> files = MakeMixedDataset(ds_.data(), kDatasetBytes);
  int compressed_percent = GetParam();
  // raw_tier = daemon: every read reaches the engine, so the counters add up to the reads made.
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=1MiB,raw_tier=daemon,compressed_percent=" +
                                                std::to_string(compressed_percent)}));

  // Two whole passes: the budget holds a sixth of the dataset, so the second pass evicts and
  // re-reads (and, with a compressed tier, decompresses) as well as missing.
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& f : files) {
      ASSERT_EQ(ReadWholeFile(ds_.MntPath(f)), ReadWholeFile(ds_.DataPath(f)))
          << f << " pass " << pass;
    }
  }
  // Unaligned reads that straddle page boundaries, repeated so some are hits.
  std::mt19937_64 rng(42);
  for (const std::string& f : {std::string("page_plus_one"), files.back(), files[files.size() - 2]}) {
    std::string expected = ReadWholeFile(ds_.DataPath(f));
    int fd = open(ds_.MntPath(f).c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << f;
    for (int i = 0; i < 200; ++i) {
      size_t off = rng() % (expected.size() + 100);
      size_t len = 1 + rng() % 20000;
      std::string got(len, '\0');
      ssize_t n = pread(fd, got.data(), len, static_cast<off_t>(off));
      ASSERT_GE(n, 0) << f << " at " << off;
      got.resize(static_cast<size_t>(n));
      std::string want = off >= expected.size() ? "" : expected.substr(off, len);
      ASSERT_EQ(got, want) << f << " at " << off << " len " << len;
    }
    close(fd);
  }

  nlohmann::json stats = ds_.Stats();
  ASSERT_TRUE(stats.is_object()) << "stats.json is not JSON";
  uint64_t reads = Counter(stats, "reads");
  EXPECT_EQ(reads, Counter(stats, "raw_hits") + Counter(stats, "compressed_hits") +
                       Counter(stats, "misses"));
  // Every page of the first pass came from the store: a miss, or a page read ahead (whose first
  // read counts as a hit).
  EXPECT_GT(Counter(stats, "misses") + Counter(stats, "readahead_hits"), kDatasetBytes / 8192)
      << "the first pass must load every page";
  EXPECT_GT(Counter(stats, "raw_hits"), 0u);
  EXPECT_EQ(stats["compressed_percent"].get<int>(), compressed_percent);
  EXPECT_LE(Counter(stats, "raw_bytes") + Counter(stats, "compressed_bytes"), 1u << 20)
      << "the tiers hold no more than the memory budget";
  if (compressed_percent == 0) {
    EXPECT_EQ(Counter(stats, "compressed_hits"), 0u);
    EXPECT_EQ(Counter(stats, "compressions"), 0u);
  } else {
    // Victims of the raw tier are compressed in the background; give the pool a moment.
    for (int i = 0; i < 200 && Counter(stats, "compressed_stored") == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      stats = ds_.Stats();
    }
    EXPECT_GT(Counter(stats, "compressed_stored"), 0u) << "text pages should enter the compressed tier";
  }
}

TEST_P(ReadThroughMountTest, ReadingStatsJsonIsNotACacheRead) {
  WriteWholeFile(ds_.DataPath("f"), CompressibleBytes(100000, 5));
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=4MiB,compressed_percent=" + std::to_string(GetParam())}));
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")).size(), 100000u);
  uint64_t reads_before = Counter(ds_.Stats(), "reads");
  for (int i = 0; i < 5; ++i) ds_.Stats();
  EXPECT_EQ(Counter(ds_.Stats(), "reads"), reads_before);
  EXPECT_GE(reads_before, 100000u / 8192);
}

INSTANTIATE_TEST_SUITE_P(CompressedPercent, ReadThroughMountTest, ::testing::Values(0, 50),
                         [](const auto& info) { return "C" + std::to_string(info.param); });

// Reads `path` from start to end with read(2)s of `chunk` bytes and checks it is `expected`.
void ReadInOrder(const std::string& path, size_t chunk, const std::string& expected) {
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string got;
  std::string buf(chunk, '\0');
  for (;;) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0) close(fd);
    ASSERT_GE(n, 0);
    if (n == 0) break;
    got.append(buf.data(), static_cast<size_t>(n));
  }
  close(fd);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "the bytes read differ from the file's";
}

// A sequential reader with 1 MiB reads: the bytes are the file's, and the daemon reads the store
// in runs (one backing read per large request's missing pages), not a page at a time. In daemon
// mode each 1 MiB read is one request; with raw_tier = kernel the kernel's read-ahead decides the
// request size.
class LargeReadMountTest : public MountTest {};

TEST_F(LargeReadMountTest, LargeReadsReturnTheBytesWithFewBackingReadsPerMiB) {
  constexpr size_t kMiB = 1 << 20;
  constexpr size_t kFileBytes = 16 * kMiB + 12345;  // a short last page
  const std::string expected = CompressibleBytes(kFileBytes, 77);
  WriteWholeFile(ds_.DataPath("big"), expected);
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=32MiB,compressed_percent=50"}));
  ASSERT_NO_FATAL_FAILURE(ReadInOrder(ds_.MntPath("big"), kMiB, expected));

  const nlohmann::json stats = ds_.Stats();
  const uint64_t misses = Counter(stats, "misses");
  const uint64_t backing_reads = Counter(stats, "backing_reads");
  EXPECT_GE(misses + Counter(stats, "readahead_pages"), kFileBytes / 8192)
      << "every page was read from the store once, by its reader or ahead of it";
  EXPECT_GT(backing_reads, 0u) << "stats.json counts backing reads";
  // A page at a time would be 128 per MiB. A run ends where free frames run out: with raw_tier =
  // kernel the daemon's raw tier is a small staging tier, full after the first MiBs, so its runs
  // are as long as the evictor's batches of free frames (about 20 per MiB here); in daemon mode
  // with 1 MiB requests and room in the raw tier, a few per MiB.
  EXPECT_LE(backing_reads, 32 * (kFileBytes / kMiB + 1)) << "misses " << misses;
}

// Read-ahead through the mount (the key's default, 2 MiB). Daemon mode: a reader of 128 KiB reads
// in order (as `cat` reads) finds most pages read ahead by the daemon; random page reads cause
// next to none; readahead = 0 turns it off. Kernel mode: the kernel's window is the key (at mount
// and live), and the daemon reads nothing ahead itself.
class ReadaheadMountTest : public MountTest {
 protected:
  void ReadInOrder(const std::string& path, const std::string& expected) {
    testing::ReadInOrder(path, 128 << 10, expected);
  }
  // The mount's read-ahead window in KiB, from its bdi; -1 if it cannot be read.
  long BdiReadaheadKiB() {
    struct stat st;
    if (stat(ds_.mnt().c_str(), &st) != 0) return -1;
    std::string v = ReadWholeFile("/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" +
                                  std::to_string(minor(st.st_dev)) + "/read_ahead_kb");
    return v.empty() ? -1 : std::stol(v);
  }
};

TEST_F(ReadaheadMountTest, DaemonModeReadsAheadOfAReaderInOrderAndNotOfARandomOne) {
  constexpr size_t kFileBytes = (16 << 20) + 5000;
  const std::string expected = CompressibleBytes(kFileBytes, 5);
  WriteWholeFile(ds_.DataPath("seq"), expected);
  WriteWholeFile(ds_.DataPath("rnd"), expected);
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=64MiB,compressed_percent=50,raw_tier=daemon"}));
  ASSERT_NO_FATAL_FAILURE(ReadInOrder(ds_.MntPath("seq"), expected));
  nlohmann::json stats = ds_.Stats();
  const uint64_t pages = kFileBytes / 8192;
  EXPECT_GT(Counter(stats, "readahead_pages"), pages / 2) << stats.dump();
  EXPECT_GT(Counter(stats, "readahead_hits"), pages / 2) << stats.dump();
  EXPECT_LT(Counter(stats, "backing_reads"), pages / 16) << stats.dump();

  const uint64_t ahead_before = Counter(stats, "readahead_pages");
  int fd = open(ds_.MntPath("rnd").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::mt19937_64 rng(3);
  std::string page(8192, '\0');
  for (int i = 0; i < 500; ++i) {
    const off_t at = static_cast<off_t>(rng() % pages) * 8192;
    ASSERT_EQ(pread(fd, page.data(), 8192, at), 8192);
    ASSERT_EQ(0, memcmp(page.data(), expected.data() + at, 8192)) << "at " << at;
  }
  close(fd);
  stats = ds_.Stats();
  EXPECT_LE(Counter(stats, "readahead_pages") - ahead_before, 64u) << stats.dump();
}

TEST_F(ReadaheadMountTest, DaemonModeReadaheadZeroReadsNothingAhead) {
  const std::string expected = CompressibleBytes(4 << 20, 6);
  WriteWholeFile(ds_.DataPath("seq"), expected);
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=64MiB,readahead=0,raw_tier=daemon"}));
  ASSERT_NO_FATAL_FAILURE(ReadInOrder(ds_.MntPath("seq"), expected));
  EXPECT_EQ(Counter(ds_.Stats(), "readahead_pages"), 0u);
}

// A file no larger than the read-ahead window and 128 KiB, read from its start in small read(2)s
// (as tar reads), costs one backing read: its first miss loads it whole, and the requests that
// follow (the kernel's read-ahead in kernel mode, the reader's own in daemon mode) find its pages.
// A read that does not start the file loads only its own pages.
class SmallFileMountTest : public MountTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(SmallFileMountTest, ASmallFileReadFromItsStartCostsOneBackingRead) {
  constexpr int kFiles = 5;
  constexpr size_t kFileBytes = (40 << 10) + 123;  // 6 pages, the last short
  std::vector<std::string> contents;
  for (int f = 0; f < kFiles; ++f) {
    contents.push_back(CompressibleBytes(kFileBytes, 20 + f));
    WriteWholeFile(ds_.DataPath("s" + std::to_string(f)), contents.back());
  }
  WriteWholeFile(ds_.DataPath("mid"), contents[0]);
  // The bound: daemon mode 128 KiB; kernel mode the kernel's window, 1/128 of its share (248 KiB).
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=64MiB,compressed_percent=50,raw_tier=" + GetParam()}));
  for (int f = 0; f < kFiles; ++f) {
    ASSERT_NO_FATAL_FAILURE(
        testing::ReadInOrder(ds_.MntPath("s" + std::to_string(f)), 4096, contents[f]));
  }
  nlohmann::json stats = ds_.Stats();
  EXPECT_EQ(Counter(stats, "backing_reads"), static_cast<uint64_t>(kFiles)) << stats.dump();
  // Daemon mode: the first request is the reader's 4 KiB; kernel mode: the kernel's first window.
  EXPECT_GE(Counter(stats, "readahead_pages"), 4u * kFiles) << stats.dump();
  EXPECT_EQ(Counter(stats, "readahead_hits"), Counter(stats, "readahead_pages")) << stats.dump();

  const uint64_t ahead_before = Counter(stats, "readahead_pages");
  int fd = open(ds_.MntPath("mid").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string page(8192, '\0');
  ASSERT_EQ(pread(fd, page.data(), page.size(), 16 << 10), 8192);
  close(fd);
  EXPECT_EQ(0, memcmp(page.data(), contents[0].data() + (16 << 10), page.size()));
  stats = ds_.Stats();
  EXPECT_EQ(Counter(stats, "readahead_pages"), ahead_before)
      << "a read that does not start the file loads no more than its request";
}

INSTANTIATE_TEST_SUITE_P(RawTiers, SmallFileMountTest, ::testing::Values("daemon", "kernel"),
                         [](const auto& info) { return info.param; });

TEST_F(ReadaheadMountTest, KernelModeTheKernelsWindowIsTheKeyWithinItsShareAtMountAndLive) {
  if (geteuid() != 0) GTEST_SKIP() << "the bdi's window is set through sysfs: needs root";
  const std::string expected = CompressibleBytes(8 << 20, 7);
  WriteWholeFile(ds_.DataPath("seq"), expected);
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=64MiB,readahead=64KiB,raw_tier=kernel,compressed_percent=25"}));
  // The daemon sets the window once INIT is answered, right after the mount.
  for (int i = 0; i < 100 && BdiReadaheadKiB() != 64; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(BdiReadaheadKiB(), 64);
  auto set = [this](const std::string& line) {
    int fd = open(ds_.MntPath(".ccfs/control").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size())) << line;
    close(fd);
  };
  // At most 1/128 of the kernel's share: 64 MiB at C = 25 leaves 48 MiB raw, less the 1 MiB
  // staging tier, 47 MiB: 376 KiB.
  set("readahead = 2MiB\n");
  EXPECT_EQ(BdiReadaheadKiB(), 376);
  // A smaller share, live: at C = 95, 3.2 MiB raw less 1 MiB; 32 KiB is the floor.
  set("compressed_percent = 95\n");
  EXPECT_EQ(BdiReadaheadKiB(), 32);
  set("compressed_percent = 25\n");
  EXPECT_EQ(BdiReadaheadKiB(), 376);
  // Nothing ahead is one ccfs page, not 0: a window of 0 makes the kernel ask for a read's pages
  // one 4 KiB request at a time.
  set("readahead = 0\n");
  EXPECT_EQ(BdiReadaheadKiB(), 8);
  set("readahead = 2MiB\n");
  EXPECT_EQ(BdiReadaheadKiB(), 376);
  ASSERT_NO_FATAL_FAILURE(ReadInOrder(ds_.MntPath("seq"), expected));
  const nlohmann::json stats = ds_.Stats();
  EXPECT_EQ(Counter(stats, "readahead_pages"), 0u) << "the kernel reads ahead, not the daemon";
  // A page at a time would be 128 backing reads per MiB; the kernel's requests are large, and each
  // miss run is cut only by the staging tier's free frames (LargeReadMountTest's bound).
  EXPECT_LE(Counter(stats, "backing_reads"), 32u * 8) << stats.dump();
}

// A stream whose pages are being read ahead (the daemon's read-ahead, or the kernel's in kernel
// mode) while its file changes: a write through the mount into the window, a truncation through
// the mount below it, and a change made directly in DATASET. The reader, reading on in order
// through the descriptor it had, never gets a byte the file no longer holds (the change epoch
// rule: a read ahead that raced a change leaves its pages unpublished).
TEST_F(ReadaheadMountTest, AStreamRacingWritesTruncationAndChangesUnderneathReadsNoStaleBytes) {
  constexpr double kAttrTimeout = 0.2;
  constexpr size_t kFileBytes = 16 << 20;
  constexpr size_t kChunk = 128 << 10;
  std::string expected = CompressibleBytes(kFileBytes, 8);
  WriteWholeFile(ds_.DataPath("f"), expected);
  WriteWholeFile(ds_.DataPath("g"), expected);
  ASSERT_NO_FATAL_FAILURE(MountOrDie(
      {"-o", "memory=64MiB,attr_timeout=" + std::to_string(kAttrTimeout)}));
  // Reads [from, to) of `fd` in order, in chunks, and checks them against `want`.
  auto read_on = [&](int fd, size_t from, size_t to, const std::string& want, const char* when) {
    std::string buf(kChunk, '\0');
    for (size_t at = from; at < to; at += kChunk) {
      const ssize_t n = pread(fd, buf.data(), kChunk, static_cast<off_t>(at));
      const size_t expect_n = std::min(kChunk, want.size() > at ? want.size() - at : 0);
      ASSERT_EQ(n, static_cast<ssize_t>(expect_n)) << when << " at " << at;
      ASSERT_EQ(0, memcmp(buf.data(), want.data() + at, expect_n)) << when << " at " << at;
    }
  };

  // A write through the mount into the window read ahead, at an unaligned offset.
  int r = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(r, 0);
  ASSERT_NO_FATAL_FAILURE(read_on(r, 0, 2 << 20, expected, "before the write"));
  if (!TestRawTierIsKernel()) {
    EXPECT_GT(Counter(ds_.Stats(), "readahead_pages"), 0u) << "the stream is read ahead";
  }
  const std::string patch(96 << 10, 'W');
  const size_t patch_at = (3 << 20) + 5000;
  int w = open(ds_.MntPath("f").c_str(), O_WRONLY);
  ASSERT_GE(w, 0);
  ASSERT_EQ(pwrite(w, patch.data(), patch.size(), patch_at), static_cast<ssize_t>(patch.size()));
  expected.replace(patch_at, patch.size(), patch);
  ASSERT_NO_FATAL_FAILURE(read_on(r, 2 << 20, 6 << 20, expected, "after the write"));

  // A truncation through the mount below where the stream has read ahead to.
  const size_t cut = (8 << 20) + 100;
  ASSERT_EQ(ftruncate(w, cut), 0);
  close(w);
  expected.resize(cut);
  ASSERT_NO_FATAL_FAILURE(read_on(r, 6 << 20, kFileBytes, expected, "after the truncation"));
  close(r);

  // A change made directly in DATASET, ahead of a stream of another file.
  std::string g = CompressibleBytes(kFileBytes, 8);
  r = open(ds_.MntPath("g").c_str(), O_RDONLY);
  ASSERT_GE(r, 0);
  ASSERT_NO_FATAL_FAILURE(read_on(r, 0, 2 << 20, g, "before the change underneath"));
  const std::string under(64 << 10, 'U');
  int d = open(ds_.DataPath("g").c_str(), O_WRONLY);
  ASSERT_GE(d, 0);
  ASSERT_EQ(pwrite(d, under.data(), under.size(), 4 << 20), static_cast<ssize_t>(under.size()));
  close(d);
  g.replace(4 << 20, under.size(), under);
  AwaitChangeUnderneath(kAttrTimeout);
  ASSERT_NO_FATAL_FAILURE(read_on(r, 2 << 20, kFileBytes, g, "after the change underneath"));
  close(r);
}

}  // namespace
}  // namespace ccfs::testing
