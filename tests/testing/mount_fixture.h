// Test helpers that mount a real ccfs instance over a dataset in a temporary directory.
//
// MountedDataset owns a directory under /var/tmp (real disk, so O_DIRECT misses are real device
// reads) holding data/ (the dataset), mnt/ (the mount point) and daemon.log (the daemon's stderr).
// Mount() starts `ccfs mount -f` (CCFS_BINARY) as a child and polls /proc/mounts until the mount
// appears (with CCFS_TEST_TRANSPORT or CCFS_TEST_RAW_TIER set, in that mode: testing/command.h). Unmount() runs fusermount3 -u (then -uz if that fails), waits for the daemon and
// returns its exit status. The destructor unmounts if needed, kills a daemon that will not go
// and removes the directory, so a failing test leaves nothing behind.
//
// Running programs (RunCommand, RunCcfs) is testing/command.h's.
//
// MountTest is a gtest fixture around one MountedDataset that, in TearDown, unmounts and expects
// the daemon to have exited 0 and the mount to be gone.
//
// Not thread-safe: one test thread drives a MountedDataset.
#ifndef CCFS_TESTS_TESTING_MOUNT_FIXTURE_H_
#define CCFS_TESTS_TESTING_MOUNT_FIXTURE_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/command.h"   // RunCommand and RunCcfs, which the mount tests use throughout
#include "util/mount_table.h"  // IsMounted, likewise

namespace ccfs::testing {

class MountedDataset {
 public:
  MountedDataset();
  ~MountedDataset();
  MountedDataset(const MountedDataset&) = delete;
  MountedDataset& operator=(const MountedDataset&) = delete;

  const std::string& root() const { return root_; }
  const std::string& data() const { return data_; }  // the dataset directory
  const std::string& mnt() const { return mnt_; }    // the mount point
  std::string DataPath(const std::string& rel) const { return data_ + "/" + rel; }
  std::string MntPath(const std::string& rel) const { return mnt_ + "/" + rel; }

  // Starts `ccfs mount -f [extra_args...] DATA MNT` and waits until it is mounted. On failure
  // returns false and sets *error (with the daemon's log).
  bool Mount(const std::vector<std::string>& extra_args, std::string* error);
  // Unmounts and reaps the daemon; returns its exit code (or -1 if nothing was mounted).
  int Unmount();
  // SIGTERMs the daemon, waits up to 10 s for it to unmount itself, then reaps it as Unmount()
  // does; returns its exit code, or -2 if it had not unmounted itself by then (it is unmounted and
  // reaped all the same). An umount racing the daemon's own would make the daemon's fail (libfuse
  // then says so on stderr).
  int Terminate();
  bool mounted() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Everything the daemon wrote to stderr so far.
  std::string DaemonLog() const;
  // MNT/.ccfs/stats.json parsed (a null json if it cannot be read).
  nlohmann::json Stats() const;

 private:
  std::string root_, data_, mnt_, log_;
  pid_t pid_ = -1;
};

class MountTest : public ::testing::Test {
 protected:
  void TearDown() override;
  // Mounts with these arguments; fails the test (fatally) if the mount does not come up.
  void MountOrDie(const std::vector<std::string>& extra_args);

  MountedDataset ds_;
};

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_TESTING_MOUNT_FIXTURE_H_
