// ccfs as systemd runs it at boot.
//
// conf/systemd/srv-data.mount and conf/systemd/fstab.example describe one mount. For either,
// systemd runs `mount -t fuse.ccfs -o OPTIONS DATASET MOUNTPOINT`: mount(8) runs mount.fuse3,
// whose shell runs `ccfs DATASET MOUNTPOINT -o OPTIONS`, which detaches once the mount is ready.
// `systemctl stop` runs umount(8), then SIGTERMs what is left. These tests do the same with the
// unit's own options and check the daemon serves them, ends with exit status 0 either way, and
// leaves no mount, process or file behind.
//
// mount(8) runs its helper with an empty environment, so mount.fuse3's shell finds `ccfs` only on
// its default PATH (/usr/local/sbin first). Rather than install anything, each run happens in a
// private mount namespace (unshare -m) in which a directory holding a `ccfs` symlink to the binary
// under test is bind-mounted over /usr/local/sbin. The FUSE mount exists only in that namespace:
// even a failed run leaves no mount in the host's.
//
// The detached daemon is not the test's child. A forked child subreaper (PR_SET_CHILD_SUBREAPER)
// runs the namespace and reaps everything under it, the daemon included, so its exit status is
// seen as systemd's would be.
//
// Also here: a daemon whose stderr is the journal (a service running `ccfs mount -f`) writes
// sd-daemon priority prefixes instead of "ccfs: ".
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ccfs/codec.h"
#include "ccfs/config.h"
#include "ccfs/options.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

const std::string kSystemdDir = std::string(CCFS_SOURCE_DIR) + "/conf/systemd";

struct MountSpec {
  std::string what, where, type, options;
  bool operator==(const MountSpec&) const = default;
};

std::ostream& operator<<(std::ostream& os, const MountSpec& m) {
  return os << m.what << " " << m.where << " " << m.type << " " << m.options;
}

// What=, Where=, Type= and Options= of a .mount unit.
MountSpec UnitSpec(const std::string& text) {
  MountSpec spec;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto value = [&](const char* key) { return line.substr(std::string(key).size()); };
    if (line.rfind("What=", 0) == 0) spec.what = value("What=");
    if (line.rfind("Where=", 0) == 0) spec.where = value("Where=");
    if (line.rfind("Type=", 0) == 0) spec.type = value("Type=");
    if (line.rfind("Options=", 0) == 0) spec.options = value("Options=");
  }
  return spec;
}

// The fields of an fstab line.
MountSpec FstabFields(const std::string& line) {
  MountSpec spec;
  std::stringstream(line) >> spec.what >> spec.where >> spec.type >> spec.options;
  return spec;
}

// The one line of fstab.example that is not a comment.
std::string FstabLine() {
  std::stringstream in(ReadWholeFile(kSystemdDir + "/fstab.example"));
  std::string found;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') {
      EXPECT_EQ(found, "") << "fstab.example has more than one line";
      found = line;
    }
  }
  return found;
}

std::string Squeeze(const std::string& text) {
  std::string out;
  std::stringstream in(text);
  for (std::string word; in >> word;) out += (out.empty() ? "" : " ") + word;
  return out;
}

TEST(SystemdUnitTest, ExampleUnitAndFstabLineDescribeTheSameMount) {
  const std::string unit = ReadWholeFile(kSystemdDir + "/srv-data.mount");
  ASSERT_NE(unit, "");
  MountSpec from_unit = UnitSpec(unit);
  EXPECT_EQ(from_unit, FstabFields(FstabLine()));
  EXPECT_EQ(from_unit.type, "fuse.ccfs");
  // systemd requires a mount unit to be named after its mount point (systemd.mount(5)).
  std::string name = from_unit.where.substr(1);
  for (char& c : name) c = c == '/' ? '-' : c;
  EXPECT_EQ(name + ".mount", "srv-data.mount");
  EXPECT_THAT(Squeeze(unit), HasSubstr(Squeeze(FstabLine()))) << "the unit quotes the fstab line";
  // Every option is a ccfs key with a valid value (or a standard mount option).
  Options options;
  std::vector<std::string> passthrough;
  Status s = ApplyOptionList(from_unit.options, "srv-data.mount", &options, &passthrough);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Every process that ended under a subreaper: pid -> exit code (128 + signal if killed).
struct Ended {
  int script = -1;
  std::map<pid_t, int> others;
};

int ExitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// SIGKILLs every process whose command line mentions `marker` (the run's unique directory): what a
// run that timed out left behind.
void KillProcessesMentioning(const std::string& marker) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadWholeFile(entry.path().string() + "/cmdline");
    if (cmdline.find(marker) != std::string::npos) kill(std::stoi(name), SIGKILL);
  }
}

// A dataset, a mount point and a `ccfs` symlink in a directory under /var/tmp, and a way to run
// a shell script on them in a private mount namespace.
class MountHelperRun {
 public:
  MountHelperRun() {
    char tmpl[] = "/var/tmp/ccfs_systemd_test.XXXXXX";
    if (mkdtemp(tmpl) != nullptr) root_ = tmpl;
    for (const char* dir : {"/data", "/mnt", "/bin", "/out"}) mkdir((root_ + dir).c_str(), 0755);
    symlink(CCFS_BINARY, (root_ + "/bin/ccfs").c_str());
  }
  ~MountHelperRun() {
    KillProcessesMentioning(root_);
    std::error_code ec;
    if (!root_.empty()) std::filesystem::remove_all(root_, ec);
  }

  const std::string& root() const { return root_; }
  std::string data() const { return root_ + "/data"; }
  std::string mnt() const { return root_ + "/mnt"; }
  std::string out(const std::string& name) const { return ReadWholeFile(root_ + "/out/" + name); }

  // Mounts with `mount -t fuse.ccfs -o OPTIONS`, copies /proc/self/mounts' line, a file and
  // stats.json out, then stops the mount with `stop`: "umount" or "sigterm".
  Ended Run(const std::string& options, const std::string& stop) {
    static const char kScript[] = R"(set -eu
bin=$1 helper_dir=$2 data=$3 mnt=$4 opts=$5 out=$6 stop=$7
mounted() { grep -q " $mnt fuse.ccfs " /proc/self/mounts; }
trap 'if mounted; then umount -l "$mnt"; fi' EXIT
mount --bind "$bin" "$helper_dir"
mount -t fuse.ccfs -o "$opts" "$data" "$mnt"
grep " $mnt " /proc/self/mounts > "$out/mounts"
cat "$mnt/f" > "$out/read"
cat "$mnt/.ccfs/stats.json" > "$out/stats.json"
if [ "$stop" = umount ]; then
  umount "$mnt"
else
  pid=$(grep -o '"pid": *[0-9]*' "$out/stats.json" | grep -o '[0-9]*$')
  kill -TERM "$pid"
  i=0
  while mounted; do i=$((i + 1)); [ $i -le 400 ] || exit 3; sleep 0.05; done
fi
)";
    // The first directory of the shell's default PATH, so ours is found before any other ccfs.
    const std::string helper_dir =
        std::filesystem::is_directory("/usr/local/sbin") ? "/usr/local/sbin" : "/usr/local/bin";
    const std::vector<std::string> argv = {
        "unshare", "--mount", "--propagation", "private", "sh", "-c", kScript, "sh",
        root_ + "/bin", helper_dir, data(), mnt(), options, root_ + "/out", stop};
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    const std::string report = root_ + "/out/ended";
    const std::string log = root_ + "/out/log";

    pid_t keeper = fork();
    if (keeper == 0) {
      prctl(PR_SET_CHILD_SUBREAPER, 1);
      int report_fd = open(report.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      pid_t script = fork();
      if (script == 0) {
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        execvp(cargv[0], cargv.data());
        _exit(127);
      }
      for (;;) {
        int status = 0;
        pid_t p = waitpid(-1, &status, 0);
        if (p < 0 && errno == EINTR) continue;
        if (p < 0) break;  // ECHILD: everything under us has ended
        dprintf(report_fd, "%d %d %d\n", static_cast<int>(p), p == script ? 1 : 0,
                ExitCode(status));
      }
      _exit(0);
    }
    Ended ended;
    if (keeper < 0 || Reap(keeper, 60) != 0) {
      ADD_FAILURE() << "the run did not end within 60 s: " << ReadWholeFile(log);
      KillProcessesMentioning(root_);
      return ended;
    }
    std::stringstream in(ReadWholeFile(report));
    for (int pid, is_script, code; in >> pid >> is_script >> code;) {
      if (is_script) {
        ended.script = code;
      } else {
        ended.others[pid] = code;
      }
    }
    return ended;
  }

 private:
  std::string root_;
};

class SystemdMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "mount(8) and unshare -m need root";
    unit_ = UnitSpec(ReadWholeFile(kSystemdDir + "/srv-data.mount"));
    ASSERT_NE(unit_.options, "");
    WriteWholeFile(run_.data() + "/f", "served through mount -t fuse.ccfs");
  }

  // Mounts with the unit's options, stops with `stop`, and checks what a user of the unit sees.
  void MountServeAndStop(const std::string& stop) {
    Ended ended = run_.Run(unit_.options, stop);
    ASSERT_EQ(ended.script, 0) << run_.out("log");
    EXPECT_THAT(run_.out("mounts"), HasSubstr(run_.data() + " " + run_.mnt() + " fuse.ccfs "))
        << "the dataset is the source, as in the fstab line";
    // mount.fuse3 adds dev,suid unless told otherwise; ccfs mounts nosuid,nodev as `ccfs mount`
    // does.
    // (The kernel lists the flags in a fixed order: rw or ro, nosuid, nodev, ...)
    EXPECT_THAT(run_.out("mounts"), HasSubstr(" fuse.ccfs rw,nosuid,nodev,"));
    EXPECT_EQ(run_.out("read"), "served through mount -t fuse.ccfs");

    // The unit's options are the daemon's settings.
    Options expected = MountDefaults();
    std::vector<std::string> passthrough;
    ASSERT_TRUE(ApplyOptionList(unit_.options, "", &expected, &passthrough).ok());
    nlohmann::json stats = nlohmann::json::parse(run_.out("stats.json"), nullptr, false);
    ASSERT_TRUE(stats.is_object()) << run_.out("stats.json");
    EXPECT_EQ(stats["memory_bytes"].get<uint64_t>(), expected.memory);
    EXPECT_EQ(stats["compressed_percent"].get<int>(), expected.compressed_percent);
    EXPECT_EQ(stats["compressor"].get<std::string>(), CodecName(expected.compressor));

    // The detached daemon ended, with 0, and nothing of the mount is left.
    const pid_t daemon = stats["daemon"]["pid"].get<pid_t>();
    ASSERT_EQ(ended.others.count(daemon), 1u) << "the daemon did not end under the run";
    EXPECT_EQ(ended.others[daemon], 0) << run_.out("log");
    EXPECT_THAT(ReadWholeFile("/proc/self/mounts"), Not(HasSubstr(run_.root())));
    EXPECT_THAT(ReadWholeFile("/run/mount/utab"), Not(HasSubstr(run_.root())));
    EXPECT_TRUE(std::filesystem::is_empty(run_.mnt()));
    EXPECT_EQ(ReadWholeFile(run_.data() + "/f"), "served through mount -t fuse.ccfs");
  }

  MountSpec unit_;
  MountHelperRun run_;
};

TEST_F(SystemdMountTest, MountTypeFuseCcfsServesTheUnitsOptionsAndUmountEndsTheDaemon) {
  MountServeAndStop("umount");
}

TEST_F(SystemdMountTest, SigtermToTheDetachedDaemonUnmountsAndExitsZero) {
  // systemctl stop SIGTERMs what is left in the unit's control group after umount; a daemon
  // stopped that way first must unmount cleanly too.
  MountServeAndStop("sigterm");
}

// A foreground daemon whose stderr is the journal: a service with `ExecStart=ccfs mount -f ...`.
class JournalLogTest : public MountTest {
 protected:
  void TearDown() override {
    unsetenv("JOURNAL_STREAM");
    MountTest::TearDown();
  }
};

TEST_F(JournalLogTest, ForegroundDaemonWritesPriorityPrefixesToTheJournalStream) {
  // The fixture appends the daemon's stderr to ROOT/daemon.log: create it first so JOURNAL_STREAM
  // can name it, as systemd names the journal socket it connects stderr to.
  const std::string log = ds_.root() + "/daemon.log";
  WriteWholeFile(log, "");
  struct stat st;
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  ASSERT_EQ(setenv("JOURNAL_STREAM",
                   (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)).c_str(), 1),
            0);
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  unsetenv("JOURNAL_STREAM");
  // A refused control line is a warning.
  int fd = open(ds_.MntPath(".ccfs/control").c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(write(fd, "memory=8MiB\n", 12), -1);
  close(fd);
  EXPECT_EQ(ds_.Terminate(), 0) << ds_.DaemonLog();

  std::stringstream in(ds_.DaemonLog());
  std::map<std::string, int> by_prefix;
  for (std::string line; std::getline(in, line);) {
    EXPECT_THAT(line, MatchesRegex("<[346]>.+")) << "every line carries its priority";
    by_prefix[line.substr(0, 3)]++;
  }
  EXPECT_GE(by_prefix["<6>"], 2) << "serving ..., unmounted ...:\n" << ds_.DaemonLog();
  EXPECT_GE(by_prefix["<4>"], 1) << "the refused control line:\n" << ds_.DaemonLog();
  EXPECT_THAT(ds_.DaemonLog(), HasSubstr("needs a remount"));
}

}  // namespace
}  // namespace ccfs::testing
