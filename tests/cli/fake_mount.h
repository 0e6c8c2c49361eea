// A fake mount for the tests of `ccfs stat` and `ccfs set`: a plain directory holding a hand-made
// .ccfs/stats.json, as the daemon would serve it, and a .ccfs/control that is a plain file (it
// accepts any write and keeps what was written). Removed when destroyed.
#ifndef CCFS_TESTS_CLI_FAKE_MOUNT_H_
#define CCFS_TESTS_CLI_FAKE_MOUNT_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "ccfs/stats.h"
#include "client/mount_client.h"
#include "stats/stats_json.h"
#include "testing/command.h"

namespace ccfs::testing {

class FakeMount {
 public:
  FakeMount() {
    std::string tmpl = ::testing::TempDir() + "ccfs-fake-mount-XXXXXX";
    path_ = mkdtemp(tmpl.data());
    std::filesystem::create_directory(std::filesystem::path(stats()).parent_path());
    WriteWholeFile(control(), "");
  }
  ~FakeMount() { std::filesystem::remove_all(path_); }
  FakeMount(const FakeMount&) = delete;
  FakeMount& operator=(const FakeMount&) = delete;

  const std::string& path() const { return path_; }
  std::string stats() const { return MountStatsPath(path_); }
  std::string control() const { return MountControlPath(path_); }
  // Replaces stats.json atomically, as a reader of the real mount would see it change. With
  // `uptime_s` the document has a "daemon" object saying so (pid 0: no process to look at).
  void SetStats(const CacheStats& s, double uptime_s = -1) const {
    DaemonIdentity daemon;
    daemon.dataset = path_;
    daemon.mountpoint = path_;
    daemon.uptime_s = uptime_s;
    WriteWholeFile(stats() + ".tmp",
                   uptime_s < 0 ? RenderStatsJson(s) : RenderMountStatsJson(s, daemon));
    std::filesystem::rename(stats() + ".tmp", stats());
  }

 private:
  std::string path_;
};

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_CLI_FAKE_MOUNT_H_
