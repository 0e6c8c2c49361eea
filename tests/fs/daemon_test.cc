// The daemon as a user meets it: config errors, live control, signals, detaching and umount.
#include <dirent.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Polls `pred` for up to two seconds.
template <typename Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 400; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

// Writes `text` to MNT/.ccfs/control in one write(2); returns 0 or the errno.
int WriteControl(const MountedDataset& ds, const std::string& text) {
  int fd = open(ds.MntPath(".ccfs/control").c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) return errno;
  int err = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
  close(fd);
  return err;
}

class DaemonTest : public MountTest {};

TEST_F(DaemonTest, ConfigErrorsNameTheKeyAndMountNothing) {
  struct Case {
    std::vector<std::string> args;
    std::string must_mention;
  };
  std::string conf = ds_.root() + "/bad.toml";
  WriteWholeFile(conf, "[cache]\nmemory = \"64MiB\"\ncompresed_percent = 10\n");
  std::vector<Case> cases = {
      {{"-o", "no_such_key=1"}, "no_such_key"},
      {{"-o", "compressed_percent=120"}, "compressed_percent"},
      {{"-o", "memory=lots"}, "memory"},
      {{"--config", conf}, "bad.toml:3"},
      {{"--config", ds_.root() + "/missing.toml"}, "missing.toml"},
  };
  for (const Case& c : cases) {
    for (bool foreground : {true, false}) {
      std::vector<std::string> args = {"mount"};
      if (foreground) args.push_back("-f");
      args.insert(args.end(), c.args.begin(), c.args.end());
      args.push_back(ds_.data());
      args.push_back(ds_.mnt());
      CommandResult r = RunCcfs(args, 10);
      EXPECT_NE(r.exit_code, 0) << c.must_mention;
      EXPECT_THAT(r.output, HasSubstr(c.must_mention));
      EXPECT_FALSE(IsMounted(ds_.mnt())) << c.must_mention;
    }
  }
  CommandResult r = RunCcfs({"mount", "-f", ds_.root() + "/nowhere", ds_.mnt()}, 10);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("nowhere"));
  r = RunCcfs({"mount", "-f", ds_.root(), ds_.mnt()}, 10);
  EXPECT_NE(r.exit_code, 0) << "a mount point inside the dataset must be refused";
  EXPECT_THAT(r.output, HasSubstr("inside dataset"));
  EXPECT_FALSE(IsMounted(ds_.mnt()));
}

TEST_F(DaemonTest, ControlChangesShowInStatsAndBadLinesAreRefused) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB,compressed_percent=25"}));
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 25);

  EXPECT_EQ(WriteControl(ds_, "compressed_percent=50\n"), 0);
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 50);
  EXPECT_NEAR(ds_.Stats()["compressed_budget_bytes"].get<double>(), 2 << 20, 1024);

  EXPECT_EQ(WriteControl(ds_, "compressor=zstd\ncompression_level=3\n"), 0);
  EXPECT_EQ(ds_.Stats()["compressor"].get<std::string>(), "zstd");

  EXPECT_EQ(WriteControl(ds_, "bogus=1\n"), EINVAL);
  EXPECT_EQ(WriteControl(ds_, "compressed_percent=500\n"), EINVAL);
  EXPECT_EQ(WriteControl(ds_, "memory=1GiB\n"), EINVAL);
  EXPECT_EQ(WriteControl(ds_, "compressed_percent=10\nmemory=1GiB\n"), EINVAL)
      << "one bad line refuses the whole write";
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 50);
  EXPECT_EQ(ds_.Stats()["memory_bytes"].get<uint64_t>(), 4u << 20);

  std::string log = ds_.DaemonLog();
  EXPECT_THAT(log, HasSubstr("bogus"));
  EXPECT_THAT(log, HasSubstr("compressed_percent = 500"));
  EXPECT_THAT(log, HasSubstr("memory"));
  EXPECT_THAT(log, HasSubstr("needs a remount"));
}

TEST_F(DaemonTest, SighupAppliesLiveKeysAndReportsTheRest) {
  std::string conf = ds_.root() + "/ccfs.toml";
  WriteWholeFile(conf, "[cache]\nmemory = \"4MiB\"\ncompressed_percent = 10\n");
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"--config", conf}));
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 10);
  WriteWholeFile(conf, "[cache]\nmemory = \"8MiB\"\ncompressed_percent = 30\n");
  ASSERT_EQ(kill(ds_.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] { return ds_.Stats()["compressed_percent"].get<int>() == 30; }));
  EXPECT_EQ(ds_.Stats()["memory_bytes"].get<uint64_t>(), 4u << 20);
  EXPECT_TRUE(Eventually([&] { return ds_.DaemonLog().find("needs a remount") != std::string::npos; }))
      << ds_.DaemonLog();
  EXPECT_THAT(ds_.DaemonLog(), HasSubstr("memory"));

  ASSERT_EQ(kill(ds_.pid(), SIGUSR1), 0);
  EXPECT_TRUE(Eventually([&] { return ds_.DaemonLog().find("hit=") != std::string::npos; }))
      << ds_.DaemonLog();
}

TEST_F(DaemonTest, SigtermUnmountsAndExitsZero) {
  WriteWholeFile(ds_.DataPath("f"), "data");
  ASSERT_NO_FATAL_FAILURE(MountOrDie({}));
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")), "data");
  EXPECT_EQ(ds_.Terminate(), 0) << ds_.DaemonLog();
}

// Descriptors a test holds open on the mount across the daemon's end; closed on every way out so
// a failed assertion does not leave the mount busy.
struct HeldOpen {
  ~HeldOpen() { CloseAll(); }
  void CloseAll() {
    if (file >= 0) close(file);
    if (stats >= 0) close(stats);
    if (dir != nullptr) closedir(dir);
    file = stats = -1;
    dir = nullptr;
  }
  int file = -1;
  int stats = -1;
  DIR* dir = nullptr;
};

TEST_F(DaemonTest, SigtermWithFilesStillOpenClosesThemAndExitsZero) {
  WriteWholeFile(ds_.DataPath("f"), "data");
  ASSERT_EQ(mkdir(ds_.DataPath("d").c_str(), 0755), 0);
  ASSERT_NO_FATAL_FAILURE(MountOrDie({}));
  // Still open when the daemon stops, so the kernel never sends their RELEASE.
  HeldOpen held;
  held.file = open(ds_.MntPath("f").c_str(), O_RDWR);
  ASSERT_GE(held.file, 0) << strerror(errno);
  char buf[4];
  ASSERT_EQ(pread(held.file, buf, sizeof(buf), 0), 4);
  held.dir = opendir(ds_.MntPath("d").c_str());
  ASSERT_NE(held.dir, nullptr) << strerror(errno);
  held.stats = open(ds_.MntPath(".ccfs/stats.json").c_str(), O_RDONLY);
  ASSERT_GE(held.stats, 0) << strerror(errno);

  // Under ASan (scripts/test.sh) a handle left unfreed fails the daemon's exit in LeakSanitizer.
  EXPECT_EQ(ds_.Terminate(), 0) << ds_.DaemonLog();
  std::string log = ds_.DaemonLog();
  // stats.json holds no handle (its node is its snapshot, freed with the daemon).
  EXPECT_THAT(log, HasSubstr("still open: files=1 directories=1")) << "f, d";
  EXPECT_THAT(log, Not(HasSubstr("LeakSanitizer")));
  // (raw_tier = kernel: the kernel may still answer from the page it holds.)
  if (!TestRawTierIsKernel()) {
    EXPECT_EQ(pread(held.file, buf, sizeof(buf), 0), -1) << "the connection is gone";
  }
}

TEST_F(DaemonTest, LazyUnmountWithAFileOpenServesItUntilItClosesThenExitsZero) {
  WriteWholeFile(ds_.DataPath("f"), "data");
  ASSERT_NO_FATAL_FAILURE(MountOrDie({}));
  HeldOpen held;
  held.file = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(held.file, 0) << strerror(errno);
  ASSERT_EQ(RunCommand({"fusermount3", "-uz", ds_.mnt()}).exit_code, 0);
  EXPECT_FALSE(IsMounted(ds_.mnt()));
  char buf[4];
  EXPECT_EQ(pread(held.file, buf, sizeof(buf), 0), 4) << "detached, but still served";
  EXPECT_EQ(std::string(buf, sizeof(buf)), "data");
  EXPECT_EQ(kill(ds_.pid(), 0), 0) << "the daemon serves until the last file closes";
  held.CloseAll();
  EXPECT_EQ(ds_.Unmount(), 0) << ds_.DaemonLog();
  EXPECT_THAT(ds_.DaemonLog(), Not(HasSubstr("LeakSanitizer")));
}

TEST_F(DaemonTest, DetachedMountReturnsReadyAndUmountWaitsForTheDaemon) {
  WriteWholeFile(ds_.DataPath("f"), "detached");
  // Relative paths, as a user types them.
  CommandResult r = RunCommand({"sh", "-c", "cd " + ds_.root() + " && " + CCFS_BINARY +
                                                " mount -o memory=2MiB data mnt"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(IsMounted(ds_.mnt())) << "ready when the command returns";
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), "detached");
  pid_t pid = ds_.Stats()["daemon"]["pid"].get<pid_t>();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(kill(pid, 0), 0);
  r = RunCcfs({"umount", ds_.mnt()}, 20);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(IsMounted(ds_.mnt()));
  EXPECT_NE(kill(pid, 0), 0) << "daemon still running after ccfs umount";
}

TEST_F(DaemonTest, MountHelperFormWorks) {
  // What mount.fuse3 runs for "mount -t fuse.ccfs DATASET MOUNTPOINT -o ...".
  WriteWholeFile(ds_.DataPath("f"), "via helper");
  CommandResult r = RunCcfs({ds_.data(), ds_.mnt(), "-o", "rw,nosuid,nodev,memory=2MiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(IsMounted(ds_.mnt()));
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), "via helper");
  EXPECT_EQ(ds_.Stats()["memory_bytes"].get<uint64_t>(), 2u << 20);
  r = RunCcfs({"umount", ds_.mnt()}, 20);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(IsMounted(ds_.mnt()));
}

TEST_F(DaemonTest, ControlDirectoryIsReachableButNotListed) {
  WriteWholeFile(ds_.DataPath("f"), "x");
  ASSERT_NO_FATAL_FAILURE(MountOrDie({}));
  std::vector<std::string> root_names, ctl_names;
  for (const auto& e : std::filesystem::directory_iterator(ds_.mnt())) {
    root_names.push_back(e.path().filename());
  }
  for (const auto& e : std::filesystem::directory_iterator(ds_.MntPath(".ccfs"))) {
    ctl_names.push_back(e.path().filename());
  }
  std::sort(ctl_names.begin(), ctl_names.end());
  EXPECT_EQ(root_names, std::vector<std::string>{"f"}) << "tar/cp/rsync of the mount skip .ccfs";
  EXPECT_EQ(ctl_names, (std::vector<std::string>{"control", "stats.json"}));
  EXPECT_NE(open(ds_.MntPath(".ccfs/stats.json").c_str(), O_WRONLY), 0);
  EXPECT_EQ(errno, EACCES);
  EXPECT_NE(rmdir(ds_.MntPath(".ccfs").c_str()), 0);
  EXPECT_NE(mkdir(ds_.MntPath(".ccfs/x").c_str(), 0755), 0);
}

// How many times `path` appears as a mount point in /proc/mounts.
int MountCount(const std::string& path) {
  std::string table = ReadWholeFile("/proc/mounts");
  int n = 0;
  for (size_t at = table.find(" " + path + " "); at != std::string::npos;
       at = table.find(" " + path + " ", at + 1)) {
    ++n;
  }
  return n;
}

TEST_F(DaemonTest, MountOntoALiveCcfsMountIsRefusedNamingThePath) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({}));
  CommandResult r = RunCcfs({"mount", ds_.data(), ds_.mnt()}, 20);
  if (r.exit_code == 0) RunCommand({"fusermount3", "-u", ds_.mnt()});  // the stacked one
  EXPECT_NE(r.exit_code, 0) << "a second mount was stacked";
  EXPECT_THAT(r.output, HasSubstr(ds_.mnt()));
  EXPECT_THAT(r.output, HasSubstr("already"));
  EXPECT_EQ(MountCount(ds_.mnt()), 1);
  // The mount.fuse3 form is refused the same way.
  r = RunCcfs({ds_.data(), ds_.mnt(), "-o", "memory=1MiB"}, 20);
  if (r.exit_code == 0) RunCommand({"fusermount3", "-u", ds_.mnt()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(MountCount(ds_.mnt()), 1);
  // The first mount still serves.
  WriteWholeFile(ds_.DataPath("f"), "still here");
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), "still here");
}

// True once stat(2) of `path` reports a dead FUSE daemon.
bool IsDeadMount(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) != 0 && (errno == ENOTCONN || errno == ECONNABORTED);
}

// The options column of the top /proc/mounts line for `path`, split at commas and sorted.
std::vector<std::string> MountOptions(const std::string& path) {
  std::stringstream table(ReadWholeFile("/proc/mounts"));
  std::string options;
  for (std::string line; std::getline(table, line);) {
    std::stringstream fields(line);
    std::string source, target, type, opts;
    if (fields >> source >> target >> type >> opts && target == path) options = opts;
  }
  std::vector<std::string> words;
  std::stringstream in(options);
  for (std::string w; std::getline(in, w, ',');) words.push_back(w);
  std::sort(words.begin(), words.end());
  return words;
}

TEST_F(DaemonTest, DeadCcfsMountIsClearedAndMountedAgainWithoutAManualStep) {
  WriteWholeFile(ds_.DataPath("f"), "after a crash");
  CommandResult r = RunCcfs({"mount", "-o", "memory=2MiB", ds_.data(), ds_.mnt()}, 20);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")), "after a crash");
  const pid_t first = ds_.Stats()["daemon"]["pid"].get<pid_t>();
  ASSERT_GT(first, 0);
  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_TRUE(Eventually([&] { return IsDeadMount(ds_.mnt()); }));

  r = RunCcfs({"mount", "-o", "memory=2MiB", ds_.data(), ds_.mnt()}, 20);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cleared a dead ccfs mount")) << "said in one log line";
  EXPECT_THAT(r.output, HasSubstr(ds_.mnt()));
  EXPECT_EQ(MountCount(ds_.mnt()), 1) << "the dead mount is gone, the new one serves";
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), "after a crash");
  const pid_t second = ds_.Stats()["daemon"]["pid"].get<pid_t>();
  EXPECT_NE(second, first);
  r = RunCcfs({"umount", ds_.mnt()}, 20);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(IsMounted(ds_.mnt()));
}

TEST_F(DaemonTest, DeadMountOfAnotherFileSystemIsStillRefused) {
  // ccfs with another subtype makes a FUSE mount of type fuse.foreign: not ccfs's to clear.
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "subtype=foreign"}));
  ASSERT_EQ(kill(ds_.pid(), SIGKILL), 0);
  ASSERT_TRUE(Eventually([&] { return IsDeadMount(ds_.mnt()); }));
  CommandResult r = RunCcfs({"mount", ds_.data(), ds_.mnt()}, 20);
  if (r.exit_code == 0) RunCommand({"fusermount3", "-u", ds_.mnt()});  // the one stacked on top
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("fusermount3 -u " + ds_.mnt()));
  EXPECT_THAT(r.output, Not(HasSubstr("cleared")));
  EXPECT_EQ(MountCount(ds_.mnt()), 1);
  EXPECT_TRUE(IsDeadMount(ds_.mnt())) << "left as it was";
  EXPECT_EQ(ds_.Unmount(), 128 + SIGKILL);  // clears the remains and reaps
}

TEST_F(DaemonTest, DatasetTheCallerCannotListIsRefusedNamingThePathAndErrno) {
  // The daemon serves with its caller's identity; root without CAP_DAC_OVERRIDE and
  // CAP_DAC_READ_SEARCH is held to the dataset's mode like any other user.
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop the capabilities";
  ASSERT_EQ(chown(ds_.data().c_str(), 65534, 65534), 0) << strerror(errno);
  ASSERT_EQ(chmod(ds_.data().c_str(), 0700), 0);
  auto mount_without_dac = [&] {
    std::vector<std::string> argv = {"setpriv", "--bounding-set=-dac_override,-dac_read_search",
                                     "--", CCFS_BINARY};
    for (const std::string& a :
         WithTestMode({"mount", "-o", "memory=2MiB", ds_.data(), ds_.mnt()})) {
      argv.push_back(a);
    }
    CommandResult r = RunCommand(argv, 20);
    if (r.exit_code == 0 && IsMounted(ds_.mnt())) RunCcfs({"umount", ds_.mnt()}, 20);
    return r;
  };
  CommandResult r = mount_without_dac();
  EXPECT_NE(r.exit_code, 0) << "mounted a dataset the daemon cannot list";
  EXPECT_THAT(r.output, HasSubstr("dataset " + ds_.data()));
  EXPECT_THAT(r.output, HasSubstr("EACCES"));
  EXPECT_THAT(r.output, HasSubstr(strerror(EACCES)));
  EXPECT_FALSE(IsMounted(ds_.mnt()));

  // The same caller may mount it once it can read it: the refusal was the dataset's mode.
  ASSERT_EQ(chmod(ds_.data().c_str(), 0755), 0);
  r = mount_without_dac();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(IsMounted(ds_.mnt()));
  ASSERT_EQ(chown(ds_.data().c_str(), 0, 0), 0);
}

TEST_F(DaemonTest, MountPointOnOrAboveTheDatasetIsRefusedNamingBoth) {
  struct Case {
    std::string dataset, mountpoint, must_mention;
  };
  const std::vector<Case> cases = {
      {ds_.data(), ds_.data(), "is dataset"},
      {ds_.data(), ds_.data() + "/.", "is dataset"},
      {ds_.data(), ds_.root(), "contains dataset"},
  };
  for (const Case& c : cases) {
    CommandResult r = RunCcfs({"mount", c.dataset, c.mountpoint}, 20);
    if (r.exit_code == 0) RunCommand({"fusermount3", "-u", c.mountpoint});
    EXPECT_NE(r.exit_code, 0) << c.mountpoint;
    EXPECT_THAT(r.output, HasSubstr(c.must_mention));
    const std::string resolved = std::filesystem::canonical(c.mountpoint).string();
    EXPECT_THAT(r.output, HasSubstr("mount point " + resolved));
    EXPECT_THAT(r.output, HasSubstr("dataset " + c.dataset));
    EXPECT_FALSE(IsMounted(ds_.data()));
    EXPECT_FALSE(IsMounted(ds_.root()));
  }
}

TEST_F(DaemonTest, DatasetsOwnControlDirectoryNameIsWarnedAbout) {
  ASSERT_EQ(mkdir(ds_.DataPath(".ccfs").c_str(), 0755), 0);
  WriteWholeFile(ds_.DataPath(".ccfs/mine"), "x");
  ASSERT_NO_FATAL_FAILURE(MountOrDie({}));
  EXPECT_THAT(ds_.DaemonLog(), HasSubstr(ds_.DataPath(".ccfs") + " in the dataset is hidden"));
  EXPECT_THAT(ds_.DaemonLog(), HasSubstr(ds_.MntPath(".ccfs")));
}

TEST_F(DaemonTest, MountHelperFormMountsNosuidNodevAsMountDoes) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=2MiB"}));
  const std::vector<std::string> by_mount = MountOptions(ds_.mnt());
  EXPECT_THAT(by_mount, ::testing::IsSupersetOf({"nosuid", "nodev"}));
  ASSERT_EQ(ds_.Unmount(), 0);

  // What mount.fuse3 runs for an fstab line "... fuse.ccfs memory=2MiB": it appends dev,suid.
  CommandResult r = RunCcfs({ds_.data(), ds_.mnt(), "-o", "memory=2MiB,dev,suid"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(MountOptions(ds_.mnt()), by_mount);
  r = RunCcfs({"umount", ds_.mnt()}, 20);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // An fstab line that asks for suid gets it (mount.fuse3 then hands on "suid" twice).
  r = RunCcfs({ds_.data(), ds_.mnt(), "-o", "suid,memory=2MiB,dev,suid"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(MountOptions(ds_.mnt()), Not(::testing::Contains("nosuid")));
  EXPECT_THAT(MountOptions(ds_.mnt()), ::testing::Contains("nodev"));
  r = RunCcfs({"umount", ds_.mnt()}, 20);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace ccfs::testing
