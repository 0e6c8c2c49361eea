// CPU time in a mount's stats.json: the request threads are measured, and what they spend outside
// the cache's read paths is the "request" path.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class CpuStatsMountTest : public MountTest {};

TEST_F(CpuStatsMountTest, StatsJsonShowsCpuByPathIncludingTheRequestThreads) {
  std::vector<std::string> files = MakeMixedDataset(ds_.data(), 4 << 20);
  // No read-ahead, and one page per read in a scattered order: every miss is its own event on a
  // request thread, so the 4 MiB read through a 1 MiB budget gives the miss path about a thousand
  // events and its sampled estimate (one event in 64) is not zero by chance. Whole-file reads
  // would make each miss a run of many pages, a few dozen events in all.
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=1MiB,raw_tier=daemon,compressed_percent=50,readahead=0"}));
  constexpr size_t kPage = 8192;
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& f : files) {
      const std::string want = ReadWholeFile(ds_.DataPath(f));
      const int fd = open(ds_.MntPath(f).c_str(), O_RDONLY);
      ASSERT_GE(fd, 0) << f;
      const size_t pages = (want.size() + kPage - 1) / kPage;
      std::string got(kPage, '\0');
      for (size_t i = 0; i < pages; ++i) {
        const size_t page = (i * 7 + static_cast<size_t>(pass)) % pages;  // 7: a stride, not a walk
        const size_t len = std::min(kPage, want.size() - page * kPage);
        ASSERT_EQ(pread(fd, got.data(), kPage, static_cast<off_t>(page * kPage)),
                  static_cast<ssize_t>(len))
            << f << " page " << page;
        ASSERT_EQ(got.compare(0, len, want, page * kPage, len), 0) << f << " page " << page;
      }
      close(fd);
    }
  }
  // Requests that are no read: their time is the request path's alone. Enough of them that the
  // read paths' sampled estimate (one read in 64, stats.h) cannot cover the request threads'
  // measured time by chance.
  for (int i = 0; i < 400; ++i) {
    for (const std::string& f : files) {
      const int fd = open(ds_.MntPath(f).c_str(), O_RDONLY);
      ASSERT_GE(fd, 0) << f;
      close(fd);
    }
  }
  nlohmann::json stats = ds_.Stats();
  ASSERT_TRUE(stats.contains("cpu_us")) << stats.dump();
  const nlohmann::json& cpu = stats["cpu_us"];
  EXPECT_GT(stats["cpu_request_threads_ns"].get<uint64_t>(), 0u);
  // Every request (lookups, opens, reads, their replies) runs on the request threads; only part
  // of a read is the cache's.
  EXPECT_GT(cpu["request"].get<double>(), 0.0) << cpu.dump();
  EXPECT_GT(cpu["miss"].get<double>(), 0.0) << cpu.dump();
  double sum = 0;
  for (const char* path : {"request", "raw_hit", "decompress", "miss", "compress", "evictor"}) {
    sum += cpu[path].get<double>();
  }
  EXPECT_NEAR(cpu["total"].get<double>(), sum, 0.01) << cpu.dump();
  // The request threads' time is the request path plus the read paths that ran on them.
  EXPECT_NEAR(cpu["request"].get<double>() + cpu["raw_hit"].get<double>() +
                  cpu["decompress"].get<double>() + cpu["miss"].get<double>(),
              stats["cpu_request_threads_ns"].get<double>() / 1e3, 0.01)
      << cpu.dump();
  EXPECT_NEAR(stats["cpu_us_per_buffer"].get<double>(),
              cpu["total"].get<double>() / stats["reads"].get<double>(), 0.01);
}

}  // namespace
}  // namespace ccfs::testing
