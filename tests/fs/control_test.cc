// The .ccfs/control protocol (src/fuse/control_dir.h): a refused write fails with EINVAL and a
// read from offset 0 on the same open file returns "error: <message>\n" naming the key and the
// reason, the daemon's own words; an accepted write reads back "ok\n"; each open file keeps its own.
#include <errno.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// An open .ccfs/control, closed on every way out so a failed assertion does not leave the mount
// busy.
class ControlFile {
 public:
  explicit ControlFile(const MountedDataset& ds)
      : fd_(open(ds.MntPath(".ccfs/control").c_str(), O_RDWR)) {}
  ~ControlFile() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  // One write(2) of `text`; 0 or the errno.
  int Write(const std::string& text) {
    ssize_t n = write(fd_, text.data(), text.size());
    return n == static_cast<ssize_t>(text.size()) ? 0 : errno;
  }

  // What a read from offset 0 returns (the outcome of this file's last write).
  std::string Outcome() {
    char buf[4096];
    ssize_t n = pread(fd_, buf, sizeof(buf), 0);
    return n < 0 ? "read failed: " + std::string(strerror(errno)) : std::string(buf, n);
  }

 private:
  int fd_;
};

class ControlMountTest : public MountTest {};

TEST_F(ControlMountTest, RefusedWriteReadsBackTheKeyAndTheReasonFromTheSameFile) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB,compressed_percent=25"}));
  ControlFile ctl(ds_);
  ASSERT_TRUE(ctl.ok()) << strerror(errno);
  EXPECT_EQ(ctl.Outcome(), "") << "no write yet: nothing to report";

  EXPECT_EQ(ctl.Write("bogus_key=1\n"), EINVAL);
  std::string unknown = ctl.Outcome();
  EXPECT_EQ(unknown, "error: .ccfs/control:1: unknown key \"bogus_key\"\n");

  EXPECT_EQ(ctl.Write("compressed_percent=10\nmemory=1GiB\n"), EINVAL);
  std::string remount = ctl.Outcome();
  EXPECT_THAT(remount, StartsWith("error: .ccfs/control:2: memory"));
  EXPECT_THAT(remount, HasSubstr("needs a remount"));

  EXPECT_EQ(ctl.Write("compressed_percent=500\n"), EINVAL);
  std::string range = ctl.Outcome();
  EXPECT_THAT(range, StartsWith("error: "));
  EXPECT_THAT(range, HasSubstr("compressed_percent = 500"));

  for (const std::string& line : {unknown, remount, range}) {
    EXPECT_THAT(line, EndsWith("\n"));
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
    // The same text the daemon logs.
    std::string message = line.substr(strlen("error: "), line.size() - strlen("error: ") - 1);
    EXPECT_THAT(ds_.DaemonLog(), HasSubstr(message));
  }
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 25) << "refused writes change nothing";

  EXPECT_EQ(ctl.Write("compressed_percent=50\n"), 0);
  EXPECT_EQ(ctl.Outcome(), "ok\n");
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 50);
}

TEST_F(ControlMountTest, EachOpenFileKeepsItsOwnOutcome) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  ControlFile good(ds_);
  ControlFile bad(ds_);
  ASSERT_TRUE(good.ok() && bad.ok()) << strerror(errno);
  EXPECT_EQ(good.Write("compressed_percent=30\n"), 0);
  EXPECT_EQ(bad.Write("compressed_percent=lots\n"), EINVAL);
  EXPECT_EQ(good.Outcome(), "ok\n");
  EXPECT_THAT(bad.Outcome(), StartsWith("error: .ccfs/control:1: "));
  EXPECT_THAT(bad.Outcome(), HasSubstr("compressed_percent"));
  ControlFile fresh(ds_);
  ASSERT_TRUE(fresh.ok()) << strerror(errno);
  EXPECT_EQ(fresh.Outcome(), "") << "a new open starts with no outcome";
}

TEST_F(ControlMountTest, StatsJsonNamesTheDaemonThatServesTheMount) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  nlohmann::json stats = ds_.Stats();
  ASSERT_TRUE(stats.contains("daemon")) << stats.dump();
  const nlohmann::json& daemon = stats["daemon"];
  EXPECT_EQ(daemon["pid"].get<pid_t>(), ds_.pid());
  EXPECT_EQ(daemon["dataset"].get<std::string>(), ds_.data());
  EXPECT_EQ(daemon["mountpoint"].get<std::string>(), ds_.mnt());
  EXPECT_GE(daemon["uptime_s"].get<double>(), 0.0);
  EXPECT_EQ(stats["memory_bytes"].get<uint64_t>(), 4u << 20) << "the engine's counters are there too";
}

// What the copy tools wrote: a whole stats.json of this mount (it parses, and names the daemon).
void ExpectWholeStats(const std::string& path, const MountedDataset& ds, const std::string& tool) {
  std::string text = ReadWholeFile(path);
  ASSERT_FALSE(text.empty()) << tool << " wrote nothing";
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << tool << " wrote a cut document: " << text;
  EXPECT_EQ(doc["daemon"]["pid"].get<pid_t>(), ds.pid()) << tool;
}

TEST_F(ControlMountTest, CopyToolsGetTheWholeStatsDocument) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  const std::string stats = ds_.MntPath(".ccfs/stats.json");
  const std::string out = ds_.root() + "/copies";
  ASSERT_EQ(mkdir(out.c_str(), 0700), 0) << strerror(errno);
  struct Tool {
    std::string name;
    std::vector<std::string> argv;
    std::string dest;
  };
  const std::vector<Tool> tools = {
      {"cp", {"cp", stats, out + "/cp.json"}, out + "/cp.json"},
      // Within the mount, copy_file_range stays in one file system (the kernel's splice fallback).
      {"cp into the mount", {"cp", stats, ds_.MntPath("cp.json")}, ds_.DataPath("cp.json")},
      {"dd", {"dd", "if=" + stats, "of=" + out + "/dd.json", "status=none"}, out + "/dd.json"},
      {"shutil.copy",
       {"python3", "-c", "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])", stats,
        out + "/shutil.json"},
       out + "/shutil.json"},
      {"rsync", {"rsync", stats, out + "/rsync.json"}, out + "/rsync.json"},
  };
  for (const Tool& tool : tools) {
    if (tool.argv[0] == "rsync" && RunCommand({"sh", "-c", "command -v rsync"}).exit_code != 0) {
      continue;  // not installed here
    }
    CommandResult r = RunCommand(tool.argv);
    EXPECT_EQ(r.exit_code, 0) << tool.name << ": " << r.output;
    ExpectWholeStats(tool.dest, ds_, tool.name);
  }
}

TEST_F(ControlMountTest, StatsJsonSizeSeekAndReadsAgreeOnOneSnapshot) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  int fd = open(ds_.MntPath(".ccfs/stats.json").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0) << strerror(errno);
  EXPECT_GT(st.st_size, 0);
  EXPECT_GE(st.st_blocks * 512, st.st_size) << "no holes: cp must not take it for a sparse file";
  // Newer opens render newer snapshots (uptime, counters: other lengths); one stays open. The
  // kernel's own GETATTRs name the open file, so this one's end stays its own.
  for (int k = 0; k < 20; ++k) (void)ds_.Stats();
  int newer = open(ds_.MntPath(".ccfs/stats.json").c_str(), O_RDONLY);
  ASSERT_GE(newer, 0) << strerror(errno);
  EXPECT_EQ(lseek(fd, 0, SEEK_DATA), 0) << strerror(errno);
  EXPECT_EQ(lseek(fd, 0, SEEK_HOLE), st.st_size) << strerror(errno);
  errno = 0;
  EXPECT_EQ(lseek(fd, st.st_size, SEEK_DATA), -1);
  EXPECT_EQ(errno, ENXIO);
  EXPECT_EQ(lseek(fd, 0, SEEK_END), st.st_size) << strerror(errno);
  // copy_file_range to a file of the same mount: the kernel bounds it by the size it was last
  // told (by the SEEK_END just above), which must cover the whole snapshot.
  int dst = open(ds_.MntPath("copy.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(dst, 0) << strerror(errno);
  loff_t in_off = 0;
  ssize_t total = 0;
  for (ssize_t n; (n = copy_file_range(fd, &in_off, dst, nullptr, 1 << 20, 0)) > 0;) total += n;
  EXPECT_EQ(total, st.st_size) << strerror(errno);
  close(dst);
  close(newer);
  EXPECT_EQ(lseek(fd, 0, SEEK_SET), 0);
  std::string got;
  char buf[1024];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) got.append(buf, n);
  close(fd);
  EXPECT_EQ(static_cast<off_t>(got.size()), st.st_size) << "fstat's size is what the reads return";
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("copy.json")), got);
}

TEST_F(ControlMountTest, ControlSeeksOverItsOutcome) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  int fd = open(ds_.MntPath(".ccfs/control").c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  errno = 0;
  EXPECT_EQ(lseek(fd, 0, SEEK_DATA), -1) << "no write yet: nothing to read";
  EXPECT_EQ(errno, ENXIO);
  ASSERT_EQ(write(fd, "compressed_percent=20\n", 22), 22) << strerror(errno);
  EXPECT_EQ(lseek(fd, 0, SEEK_DATA), 0) << strerror(errno);
  EXPECT_EQ(lseek(fd, 0, SEEK_HOLE), 3) << "\"ok\\n\"";
  close(fd);
}

TEST_F(ControlMountTest, RefusalQuotesTheBytesGivenEscapedAndCut) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  ControlFile ctl(ds_);
  ASSERT_TRUE(ctl.ok()) << strerror(errno);
  EXPECT_EQ(ctl.Write("bo\x1b[2Jgus\x01=1\n"), EINVAL);
  EXPECT_EQ(ctl.Outcome(), "error: .ccfs/control:1: unknown key \"bo\\x1b[2Jgus\\x01\"\n");
  EXPECT_EQ(ctl.Write("compressor=\xff\xfe\r\n"), EINVAL);
  EXPECT_THAT(ctl.Outcome(), HasSubstr("\\xff\\xfe"));
  EXPECT_EQ(ctl.Write(std::string(5000, 'k') + "=1\n"), EINVAL);
  std::string cut = ctl.Outcome();
  EXPECT_THAT(cut, HasSubstr(std::string(64, 'k') + "\u2026\""));
  EXPECT_THAT(cut, Not(HasSubstr(std::string(65, 'k'))));
  EXPECT_EQ(ctl.Write("compressed_percent=" + std::string(200, '9') + "\x07\n"), EINVAL);
  EXPECT_LT(ctl.Outcome().size(), 300u) << ctl.Outcome();
  const std::string log = ds_.DaemonLog();
  EXPECT_THAT(log, HasSubstr("unknown key \"bo\\x1b[2Jgus\\x01\""));
  for (char c : {'\x1b', '\x01', '\x07', '\xff'}) {
    EXPECT_EQ(log.find(c), std::string::npos) << "raw byte " << static_cast<int>(c) << " in the log";
  }
  EXPECT_THAT(log, Not(HasSubstr(std::string(65, 'k'))));
}

}  // namespace
}  // namespace ccfs::testing
