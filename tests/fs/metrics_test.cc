// The metrics endpoint of a real mount (`-o metrics=...`): scraped with curl, its counters (page
// reads, bytes served, FUSE requests by op) move with reads through the mount and agree with
// stats.json, Prometheus's own checker (promtool, from
// Debian's prometheus package; scripts/setup.sh extracts it) accepts the text, a bare port listens
// on loopback only, a stalled client holds up neither reads nor the unmount, and the port is
// released when the daemon ends.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "ccfs/codec.h"
#include "ccfs/options.h"
#include "fs/fs_test_util.h"
#include "fs/metrics_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

using ::testing::HasSubstr;

// The value of `series` ("name" or "name{labels}" exactly as written) in a scrape; -1 if absent.
double Reads(const std::string& text, const std::string& path) {
  return Sample(text, "ccfs_reads_total{path=\"" + path + "\"}");
}

// promtool from scripts/setup.sh (.tools/bin) or PATH; "" when there is none.
std::string Promtool() {
  std::string local = std::string(CCFS_SOURCE_DIR) + "/.tools/bin/promtool";
  if (access(local.c_str(), X_OK) == 0) return local;
  if (RunCommand({"promtool", "--version"}, 10).exit_code == 0) return "promtool";
  return "";
}

// True when /proc/net/tcp lists a listening socket on `hex_address`:`port` (IPv4, as the kernel
// writes it: 0100007F is 127.0.0.1, 00000000 is every interface).
bool ListensOn(const std::string& hex_address, int port) {
  char local[32];
  snprintf(local, sizeof(local), "%s:%04X", hex_address.c_str(), port);
  std::istringstream in(ReadWholeFile("/proc/net/tcp"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string slot, local_address, remote_address, state;
    fields >> slot >> local_address >> remote_address >> state;
    if (local_address == local && state == "0A") return true;  // 0A = TCP_LISTEN
  }
  return false;
}

// A client that connects and sends nothing.
int ConnectAndStall(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class MetricsTest : public MountTest {
 protected:
  void SetUp() override {
    if (!HaveCurl()) GTEST_SKIP() << "curl not found: run scripts/setup.sh (Debian curl)";
    port_ = FreePort();
    ASSERT_GT(port_, 0);
  }
  std::string MetricsOption() const { return "metrics=127.0.0.1:" + std::to_string(port_); }
  std::string Scrape() {
    CommandResult r = Curl(port_);
    EXPECT_EQ(r.exit_code, 0) << r.output << "\n" << ds_.DaemonLog();
    return r.out;
  }

  int port_ = 0;
};

constexpr size_t kFileBytes = 1 << 20;
constexpr double kPages = kFileBytes / 8192;  // default page_size

// Counts every read of the file: raw_tier = daemon, where every read reaches the daemon, and no
// read-ahead, so that every page the first pass reads is a miss.
TEST_F(MetricsTest, CountersMoveWithReadsThroughTheMountAndAgreeWithStatsJson) {
  WriteWholeFile(ds_.DataPath("f"), CompressibleBytes(kFileBytes, 1));
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", MetricsOption() + ",raw_tier=daemon,readahead=0"}));
  const std::string before = Scrape();
  EXPECT_EQ(Reads(before, "miss"), 0);

  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")).size(), kFileBytes);  // misses
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")).size(), kFileBytes);  // raw hits: 256MiB holds it
  const std::string after = Scrape();
  EXPECT_GE(Reads(after, "miss"), kPages);
  EXPECT_GE(Reads(after, "raw"), kPages);
  EXPECT_EQ(Reads(after, "compressed"), 0);
  for (const std::string path : {"raw", "compressed", "miss"}) {
    SCOPED_TRACE(path);
    const std::string labels = "{path=\"" + path + "\"}";
    EXPECT_EQ(Sample(after, "ccfs_read_seconds_count" + labels), Reads(after, path));
    EXPECT_EQ(Sample(after, "ccfs_read_seconds_bucket{path=\"" + path + "\",le=\"+Inf\"}"),
              Reads(after, path));
  }
  EXPECT_GT(Sample(after, "ccfs_read_seconds_sum{path=\"miss\"}"), 0);
  // Bytes served, exactly: the file twice. A read(2) that ends inside a page leaves the rest of
  // that page to the next one, a raw hit, so the first pass is not all misses; the second is all
  // raw hits.
  const double miss_bytes = Sample(after, "ccfs_read_bytes_total{path=\"miss\"}");
  const double raw_bytes = Sample(after, "ccfs_read_bytes_total{path=\"raw\"}");
  EXPECT_EQ(miss_bytes + raw_bytes, 2 * kFileBytes);
  EXPECT_GT(miss_bytes, 0);
  EXPECT_GE(raw_bytes, kFileBytes);
  EXPECT_EQ(Sample(after, "ccfs_read_bytes_total{path=\"compressed\"}"), 0);
  EXPECT_EQ(Sample(after, "ccfs_readahead_hit_bytes_total"), 0) << "readahead=0";
  // The daemon's requests: a READ reaches it per read(2) here (direct_io), and its time per READ
  // holds the engine's time per page.
  const double read_requests = Sample(after, "ccfs_fuse_requests_total{op=\"read\"}");
  EXPECT_GE(read_requests, 2);
  EXPECT_EQ(Sample(after, "ccfs_fuse_request_seconds_count{op=\"read\"}"), read_requests);
  EXPECT_EQ(Sample(after, "ccfs_fuse_request_seconds_bucket{op=\"read\",le=\"+Inf\"}"),
            read_requests);
  EXPECT_GE(Sample(after, "ccfs_fuse_requests_total{op=\"open\"}"), 2);
  EXPECT_GE(Sample(after, "ccfs_fuse_request_seconds_sum{op=\"read\"}"),
            Sample(after, "ccfs_read_seconds_sum{path=\"raw\"}") +
                Sample(after, "ccfs_read_seconds_sum{path=\"miss\"}"));
  EXPECT_EQ(Sample(before, "ccfs_fuse_requests_total{op=\"mknod\"}"), -1)
      << "an op never asked for has no series";
  EXPECT_EQ(Sample(after, "ccfs_raw_pages"), Reads(after, "miss")) << "every miss kept its page";
  EXPECT_EQ(Sample(after, "ccfs_memory_bytes"), 256 << 20);
  EXPECT_EQ(Sample(after, "ccfs_mount_info{dataset=\"" + ds_.data() + "\",mountpoint=\"" +
                              ds_.mnt() + "\"}"),
            1);
  EXPECT_EQ(Sample(after, "ccfs_compressor_info{compressor=\"" +
                              std::string(CodecName(MountDefaults().compressor)) + "\"}"),
            1);
  EXPECT_GT(Sample(after, "ccfs_uptime_seconds"), Sample(before, "ccfs_uptime_seconds"));

  // Nothing read since the scrape: stats.json counts the same reads.
  nlohmann::json stats = ds_.Stats();
  EXPECT_EQ(stats["raw_hits"].get<double>(), Reads(after, "raw"));
  EXPECT_EQ(stats["misses"].get<double>(), Reads(after, "miss"));
  EXPECT_EQ(stats["reads"].get<double>(),
            Reads(after, "raw") + Reads(after, "compressed") + Reads(after, "miss"));

  CommandResult type =
      Curl(port_, "/metrics", {"--output", "/dev/null", "--write-out", "%{content_type}"});
  EXPECT_EQ(type.out, "text/plain; version=0.0.4; charset=utf-8");
  CommandResult other = Curl(port_, "/");
  EXPECT_NE(other.exit_code, 0) << "only /metrics is served: " << other.out;
}

// A read-only open has nothing to flush: its close sends the daemon no FLUSH (FOPEN_NOFLUSH), in
// both raw tiers; a close of a file opened for writing still does.
TEST_F(MetricsTest, OnlyAWritableOpenIsFlushedAtClose) {
  WriteWholeFile(ds_.DataPath("f"), CompressibleBytes(64 << 10, 2));
  for (const char* tier : {"daemon", "kernel"}) {
    SCOPED_TRACE(tier);
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", MetricsOption() + ",raw_tier=" + tier}));
    const std::string path = ds_.MntPath("f");
    for (int k = 0; k < 20; ++k) {
      const int fd = open(path.c_str(), O_RDONLY);
      ASSERT_GE(fd, 0);
      char c;
      ASSERT_EQ(pread(fd, &c, 1, k), 1);
      ASSERT_EQ(close(fd), 0);
    }
    for (int k = 0; k < 3; ++k) {
      const int fd = open(path.c_str(), O_RDWR);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(close(fd), 0);
    }
    const std::string after = Scrape();
    EXPECT_EQ(Sample(after, "ccfs_fuse_requests_total{op=\"flush\"}"), 3);
    EXPECT_GE(Sample(after, "ccfs_fuse_requests_total{op=\"open\"}"), 23);
    ASSERT_EQ(ds_.Unmount(), 0);
  }
}

TEST_F(MetricsTest, PromtoolAcceptsTheScrape) {
  const std::string promtool = Promtool();
  if (promtool.empty()) {
    GTEST_SKIP() << "promtool not found: run scripts/setup.sh (it extracts promtool from Debian's "
                    "prometheus package into .tools/bin) or install it on PATH";
  }
  WriteWholeFile(ds_.DataPath("f"), CompressibleBytes(2 * kFileBytes, 2));
  // The smallest budget, below the file's size, so reads also evict and compress.
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", MetricsOption() + ",memory=1MiB"}));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")).size(), 2 * kFileBytes);
  WriteWholeFile(ds_.MntPath("g"), "written through the mount");
  const std::string text = Scrape();
  ASSERT_GT(Sample(text, "ccfs_evictions_total"), 0) << text;
  const std::string file = ds_.root() + "/scrape.txt";
  WriteWholeFile(file, text);
  CommandResult r = RunCommand({"sh", "-c", "'" + promtool + "' check metrics < '" + file + "'"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "") << "promtool's lint found problems";
}

TEST_F(MetricsTest, BarePortListensOnLoopbackOnlyAndIsReleasedAtSigterm) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "metrics=" + std::to_string(port_)}));
  EXPECT_TRUE(ListensOn("0100007F", port_)) << ReadWholeFile("/proc/net/tcp");
  EXPECT_FALSE(ListensOn("00000000", port_)) << "a bare port must not listen on every interface";
  EXPECT_THAT(ds_.DaemonLog(), HasSubstr("metrics at http://127.0.0.1:" + std::to_string(port_) +
                                         "/metrics"));
  EXPECT_EQ(Curl(port_).exit_code, 0);

  EXPECT_EQ(ds_.Terminate(), 0) << ds_.DaemonLog();
  EXPECT_FALSE(IsMounted(ds_.mnt()));
  EXPECT_FALSE(ListensOn("0100007F", port_)) << "the daemon ended: its port must be closed";
  EXPECT_NE(Curl(port_).exit_code, 0);
}

TEST_F(MetricsTest, StalledClientsHoldUpNeitherReadsNorTheUnmount) {
  WriteWholeFile(ds_.DataPath("f"), CompressibleBytes(kFileBytes, 3));
  // raw_tier = daemon: both passes' reads reach the daemon, which must keep serving them.
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", MetricsOption() + ",raw_tier=daemon"}));
  // More stalled connections than the server has workers: each holds one until its timeout.
  std::vector<int> stalled;
  for (int i = 0; i < 4; ++i) stalled.push_back(ConnectAndStall(port_));
  for (int fd : stalled) ASSERT_GE(fd, 0);

  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")).size(), kFileBytes);
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")).size(), kFileBytes);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3))
      << "reads waited for the metrics server";
  EXPECT_GE(ds_.Stats()["reads"].get<double>(), 2 * kPages);

  // The unmount stops the server with the stalled clients still connected.
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(ds_.Unmount(), 0) << ds_.DaemonLog();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4))
      << "the server waits for a stalled client at most its 2 s timeout";
  for (int fd : stalled) close(fd);
  EXPECT_FALSE(ListensOn("0100007F", port_));
}

}  // namespace
}  // namespace ccfs::testing
