// raw_tier = kernel: the kernel's page cache is the raw tier. Repeated reads are answered by the
// kernel without reaching the daemon; the kernel's pages of the mount's files stay within their
// share of memory (measured with mincore, not taken from the daemon's own ledger); a change made
// underneath is seen within attr_timeout; writes, shared writable mappings and a real program that
// needs them (SQLite in WAL mode) work.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ccfs/options.h"
#include "fs/fs_test_util.h"
#include "testing/command.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class KernelTierMountTest : public MountTest {
 protected:
  void MountKernel(const std::string& options) {
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "raw_tier=kernel," + options}));
  }

  uint64_t DaemonReads() { return ds_.Stats()["reads"].get<uint64_t>(); }

  // Bytes of `path` (through the mount) that are in the kernel's page cache now, by mincore on a
  // shared read-only mapping (mapping does not read the file; mincore does not fault).
  static uint64_t ResidentBytes(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return 0;
    struct stat st;
    fstat(fd, &st);
    if (st.st_size == 0) {
      close(fd);
      return 0;
    }
    void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return 0;
    const long page = sysconf(_SC_PAGESIZE);
    std::vector<unsigned char> vec((st.st_size + page - 1) / page);
    uint64_t resident = 0;
    if (mincore(p, st.st_size, vec.data()) == 0) {
      for (unsigned char v : vec) resident += (v & 1) ? page : 0;
    }
    munmap(p, st.st_size);
    return resident;
  }

  static std::string ReadAll(const std::string& path) { return ReadWholeFile(path); }
};

TEST_F(KernelTierMountTest, RepeatedReadsAreAnsweredByTheKernel) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=50"));
  const std::string bytes = CompressibleBytes(512 * 1024, 1);
  WriteWholeFile(ds_.DataPath("f"), bytes);
  ASSERT_TRUE(ReadAll(ds_.MntPath("f")) == bytes);
  const uint64_t after_first = DaemonReads();
  const uint64_t rerequests_first = ds_.Stats()["kernel_rerequests"].get<uint64_t>();
  EXPECT_GT(after_first, 0u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ReadAll(ds_.MntPath("f")) == bytes);
  // The kernel may reclaim a few of the file's pages by itself when the host is short of memory
  // (a long test run fills it with page cache); the daemon counts those as rerequests, since its
  // ledger still holds them. Any other page asked for again was dropped by ccfs, and a file opened
  // without keep_cache would come back whole at each of the three opens. A rerequest is counted
  // just after its reply, so the two counts are compared until they meet or a second has passed.
  nlohmann::json s;
  uint64_t again = 0, rerequested = 0;
  for (int i = 0; i < 100; ++i) {
    s = ds_.Stats();
    again = s["reads"].get<uint64_t>() - after_first;
    rerequested = s["kernel_rerequests"].get<uint64_t>() - rerequests_first;
    if (again == rerequested) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(again, rerequested) << "a repeated read reached the daemon";
  EXPECT_LT(rerequested, bytes.size() / 8192 / 4) << "the kernel kept too little of the file";
  EXPECT_EQ(s["raw_tier"], "kernel");
  EXPECT_GE(s["kernel_held_bytes"].get<uint64_t>(), bytes.size());
}

// The kernel's pages of the mount's files, measured by mincore, never exceed the kernel's share
// (memory - compressed tier - staging), however much is read, and the daemon's ledger agrees.
TEST_F(KernelTierMountTest, TheKernelsPagesStayWithinTheirShareOfMemory) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=50"));
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) {
    names.push_back("f" + std::to_string(i));
    WriteWholeFile(ds_.DataPath(names.back()), CompressibleBytes(2 << 20, 10 + i));
  }
  const uint64_t budget = ds_.Stats()["kernel_budget_bytes"].get<uint64_t>();
  ASSERT_GT(budget, 2u << 20);
  ASSERT_LT(budget, 5u << 20);
  for (int round = 0; round < 2; ++round) {
    for (const std::string& n : names) {
      ASSERT_EQ(ReadAll(ds_.MntPath(n)).size(), 2u << 20);
      // The invalidations run on a thread of their own: give it a moment, then measure.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      uint64_t resident = 0;
      for (const std::string& m : names) resident += ResidentBytes(ds_.MntPath(m));
      EXPECT_LE(resident, budget + budget / 32) << "after reading " << n;
    }
  }
  nlohmann::json s = ds_.Stats();
  EXPECT_LE(s["kernel_held_bytes"].get<uint64_t>(), budget + budget / 32);  // the batch slack
  EXPECT_GT(s["kernel_evictions"].get<uint64_t>(), 0u);
}

// kernel_evict = false leaves the kernel's share to a memory cgroup: the daemon drops nothing.
TEST_F(KernelTierMountTest, WithKernelEvictOffTheDaemonDropsNothing) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=50,kernel_evict=false"));
  for (int i = 0; i < 4; ++i) {
    WriteWholeFile(ds_.DataPath("f" + std::to_string(i)), CompressibleBytes(2 << 20, 30 + i));
    ASSERT_EQ(ReadAll(ds_.MntPath("f" + std::to_string(i))).size(), 2u << 20);
  }
  nlohmann::json s = ds_.Stats();
  EXPECT_EQ(s["kernel_evictions"].get<uint64_t>(), 0u);
  uint64_t resident = 0;
  for (int i = 0; i < 4; ++i) resident += ResidentBytes(ds_.MntPath("f" + std::to_string(i)));
  EXPECT_GT(resident, s["kernel_budget_bytes"].get<uint64_t>()) << "pages were dropped";
}

TEST_F(KernelTierMountTest, ItsShareFollowsALiveChangeOfCompressedPercent) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=16MiB,compressed_percent=25"));
  const uint64_t before = ds_.Stats()["kernel_budget_bytes"].get<uint64_t>();
  WriteWholeFile(ds_.MntPath(".ccfs/control"), "compressed_percent=75\n");
  const uint64_t after = ds_.Stats()["kernel_budget_bytes"].get<uint64_t>();
  EXPECT_LT(after, before);
  EXPECT_NEAR(static_cast<double>(before - after), 0.5 * (16 << 20), 64 * 1024);
}

// compressed_percent = auto: the pages the curve samples are dropped from the kernel soon after
// they are served, so every read of them reaches the daemon; the tuner predicts from the trip it
// measures through the mount, and the kernel's share follows each split it applies.
TEST_F(KernelTierMountTest, UnderAutoTheCurvesPagesStayOutOfTheKernelAndTheSplitIsPredicted) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=auto,auto_interval=0.1"));
  const std::string bytes = CompressibleBytes(32 << 20, 3);  // 4x memory
  WriteWholeFile(ds_.DataPath("f"), bytes);
  const int fd = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  constexpr size_t kPage = 8192;
  std::vector<char> got(kPage);
  uint64_t x = 12345;
  nlohmann::json s;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 2000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t page = (x >> 33) % (bytes.size() / kPage);
      ASSERT_EQ(pread(fd, got.data(), kPage, static_cast<off_t>(page * kPage)),
                static_cast<ssize_t>(kPage));
      ASSERT_EQ(std::memcmp(got.data(), bytes.data() + page * kPage, kPage), 0) << "page " << page;
    }
    s = ds_.Stats();
    if (!s["split_estimate"]["predicted"].empty()) break;
  }
  close(fd);
  EXPECT_GT(s["kernel_kept_out"].get<uint64_t>(), 0u);
  EXPECT_FALSE(s["split_estimate"]["predicted"].empty()) << s["split_estimate"].dump();
  // The budget is set just after the split: a snapshot may fall between the two.
  for (int i = 0; i < 50; ++i) {
    s = ds_.Stats();
    Options o = MountDefaults();
    o.memory = 8 << 20;
    o.compressed_percent = s["compressed_percent"].get<int>();
    if (s["kernel_budget_bytes"].get<uint64_t>() == o.kernel_budget()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Options o = MountDefaults();
  o.memory = 8 << 20;
  o.compressed_percent = s["compressed_percent"].get<int>();
  EXPECT_EQ(s["kernel_budget_bytes"].get<uint64_t>(), o.kernel_budget())
      << "at compressed_percent " << o.compressed_percent << " after "
      << s["split_changes"].get<uint64_t>() << " changes";
}

// kernel_demote: the pages the daemon tells the kernel to drop are fetched back first
// (notify_retrieve) and kept compressed, so reading them again is a compressed hit with the right
// bytes; a write through the mount after a page was demoted reads back as written.
TEST_F(KernelTierMountTest, PagesTheKernelDropsAreDemotedAndReadBackRight) {
  for (const char* policy : {"exclusive", "mix"}) {
    SCOPED_TRACE(policy);
    ASSERT_NO_FATAL_FAILURE(
        MountKernel(std::string("memory=8MiB,compressed_percent=50,kernel_demote=") + policy));
    std::vector<std::string> names, contents;
    for (int i = 0; i < 8; ++i) {
      names.push_back(ds_.MntPath(std::string(policy) + std::to_string(i)));
      contents.push_back(CompressibleBytes(1 << 20, 50 + i));
      WriteWholeFile(ds_.DataPath(std::string(policy) + std::to_string(i)), contents.back());
    }
    for (size_t i = 0; i < names.size(); ++i) ASSERT_TRUE(ReadAll(names[i]) == contents[i]);
    // Retrieves and their replies run beside the reads: wait for the first demotions.
    nlohmann::json s;
    for (int t = 0; t < 100; ++t) {
      s = ds_.Stats();
      if (s["demotions"].get<uint64_t>() > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_GT(s["kernel_retrieved"].get<uint64_t>(), 0u);
    EXPECT_GT(s["demotions"].get<uint64_t>(), 0u);
    const uint64_t hits_before = s["compressed_hits"].get<uint64_t>();
    // The first file left the kernel first: rewrite one of its pages, then read everything.
    const std::string page(8192, 'w');
    contents[0].replace(8192 * 3, page.size(), page);
    {
      int fd = open(names[0].c_str(), O_WRONLY);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(pwrite(fd, page.data(), page.size(), 8192 * 3), 8192);
      close(fd);
    }
    for (size_t i = 0; i < names.size(); ++i) ASSERT_TRUE(ReadAll(names[i]) == contents[i]) << i;
    s = ds_.Stats();
    EXPECT_GT(s["compressed_hits"].get<uint64_t>(), hits_before);
    EXPECT_EQ(s["read_errors"].get<uint64_t>(), 0u);
    ASSERT_EQ(ds_.Unmount(), 0);
  }
}

// The staleness bound: a file rewritten in place underneath, through a descriptor opened before
// and neither stat'ed nor opened again, reads the new bytes once attr_timeout has passed (the
// daemon's open-file watch finds the change and has the kernel drop its pages).
TEST_F(KernelTierMountTest, AChangeUnderneathIsSeenWithinAttrTimeout) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=50,attr_timeout=0.2"));
  const std::string v1 = CompressibleBytes(200000, 3);
  const std::string v2 = CompressibleBytes(200000, 4);
  WriteWholeFile(ds_.DataPath("f"), v1);
  int fd = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string got(v1.size(), '\0');
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  ASSERT_TRUE(got == v1);
  int w = open(ds_.DataPath("f").c_str(), O_WRONLY);
  ASSERT_GE(w, 0);
  ASSERT_EQ(pwrite(w, v2.data(), v2.size(), 0), static_cast<ssize_t>(v2.size()));
  close(w);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  EXPECT_TRUE(got == v2) << "stale bytes past attr_timeout";
  close(fd);
  nlohmann::json st = ds_.Stats();
  EXPECT_GE(st["kernel_watch_changes"].get<uint64_t>(), 1u);
  EXPECT_GE(st["kernel_watch_checks"].get<uint64_t>(), 1u);
}

// A write through the mount is the daemon's own change: the kernel keeps its pages of the file
// (the written ones hold the new bytes), whatever refreshes its attributes afterwards. A kernel
// left to drop a file's pages on a new mtime (auto_inval_data) drops them all at the first fstat
// after any write, and a database that writes and reads its files loses its cache at each write.
TEST_F(KernelTierMountTest, AWriteThroughTheMountKeepsTheKernelsPagesOfTheFile) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=16MiB,compressed_percent=0,attr_timeout=0.2"));
  const std::string base = RandomBytes(2 << 20, 11);
  WriteWholeFile(ds_.DataPath("f"), base);
  int fd = open(ds_.MntPath("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::string got(base.size(), '\0');
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  const uint64_t before = ResidentBytes(ds_.MntPath("f"));
  ASSERT_GE(before, base.size() * 9 / 10) << "the kernel did not keep the file after a read";
  std::string want = base;
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(pwrite(fd, "x", 1, 100 + k * 300000), 1);
    want[100 + k * 300000] = 'x';
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);  // refreshes the attributes: the mtime is new
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past attr_timeout and a watch pass
    ASSERT_EQ(fstat(fd, &st), 0);
  }
  const uint64_t after = ResidentBytes(ds_.MntPath("f"));
  EXPECT_GE(after, base.size() * 9 / 10) << "writes through the mount dropped the kernel's pages ("
                                         << before << " bytes held before, " << after << " after)";
  const uint64_t reads = DaemonReads();
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  EXPECT_TRUE(got == want);
  // At most an eighth of the file's pages: a kernel that drops the file at a refresh asks for
  // all 256 again, while the kernel may still drop a few pages of its own after the writes.
  EXPECT_LE(DaemonReads() - reads, base.size() / 8192 / 8)
      << "the read after the writes went to the daemon (" << before << " bytes held before, "
      << after << " after)";
  close(fd);
  EXPECT_TRUE(ReadAll(ds_.DataPath("f")) == want);
  EXPECT_EQ(ds_.Stats()["kernel_watch_changes"].get<uint64_t>(), 0u)
      << "a write through the mount was taken for a change underneath";
}

TEST_F(KernelTierMountTest, WritesThroughTheMountReadBackFromEitherSide) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=50"));
  const std::string base = CompressibleBytes(300000, 5);
  WriteWholeFile(ds_.DataPath("f"), base);
  ASSERT_TRUE(ReadAll(ds_.MntPath("f")) == base);  // cached by the kernel
  int fd = open(ds_.MntPath("f").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string patch = RandomBytes(10001, 6);
  ASSERT_EQ(pwrite(fd, patch.data(), patch.size(), 4000), static_cast<ssize_t>(patch.size()));
  close(fd);
  std::string want = base;
  want.replace(4000, patch.size(), patch);
  EXPECT_TRUE(ReadAll(ds_.MntPath("f")) == want) << "the kernel's pages are stale after a write";
  EXPECT_TRUE(ReadAll(ds_.DataPath("f")) == want) << "the write did not go through";
}

TEST_F(KernelTierMountTest, SharedWritableMappingWritesTheFile) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=50"));
  const size_t size = 256 * 1024;
  WriteWholeFile(ds_.DataPath("f"), CompressibleBytes(size, 7));
  int fd = open(ds_.MntPath("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  ASSERT_NE(p, MAP_FAILED) << strerror(err);
  const std::string patch = RandomBytes(50000, 8);
  memcpy(static_cast<char*>(p) + 70000, patch.data(), patch.size());
  ASSERT_EQ(msync(p, size, MS_SYNC), 0) << strerror(errno);
  munmap(p, size);
  close(fd);
  std::string want = CompressibleBytes(size, 7);
  want.replace(70000, patch.size(), patch);
  EXPECT_TRUE(ReadAll(ds_.DataPath("f")) == want) << "msync did not reach DATASET";
  EXPECT_TRUE(ReadAll(ds_.MntPath("f")) == want);
}

// SQLite in WAL mode maps its -shm file shared and writable; through the mount it must work and
// keep every committed row.
TEST_F(KernelTierMountTest, SqliteInWalModeKeepsEveryCommittedRow) {
  ASSERT_NO_FATAL_FAILURE(MountKernel("memory=8MiB,compressed_percent=50"));
  const std::string db = ds_.MntPath("t.db");
  const std::string script =
      "import sqlite3, sys\n"
      "c = sqlite3.connect(sys.argv[1])\n"
      "assert c.execute('pragma journal_mode=wal').fetchone()[0] == 'wal'\n"
      "c.execute('create table t (k integer primary key, v text)')\n"
      "for i in range(20):\n"
      "    with c:\n"
      "        c.executemany('insert into t (v) values (?)', [(str(i) * 200,)] * 100)\n"
      "c.close()\n"
      "c = sqlite3.connect(sys.argv[1])\n"
      "print(c.execute('select count(*) from t').fetchone()[0],\n"
      "      c.execute('pragma integrity_check').fetchone()[0])\n";
  CommandResult r = RunCommand({"python3", "-c", script, db}, 120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "2000 ok\n");
  // And the database in DATASET (after SQLite checkpointed on close) reads the same.
  CommandResult back = RunCommand(
      {"python3", "-c",
       "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from t')"
       ".fetchone()[0])",
       ds_.DataPath("t.db")},
      60);
  EXPECT_EQ(back.output, "2000\n");
}

}  // namespace
}  // namespace ccfs::testing
