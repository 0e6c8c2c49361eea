// bench/delay_fs mounted over a test's dataset directory: a FUSE store beneath ccfs, for the tests
// that need one (a store that answers reads slowly, a store that counts what it answers).
#ifndef CCFS_TESTS_FS_DELAY_STORE_H_
#define CCFS_TESTS_FS_DELAY_STORE_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "testing/command.h"
#include "util/mount_table.h"

namespace ccfs::testing {

class DelayStore {
 public:
  DelayStore() = default;
  DelayStore(const DelayStore&) = delete;
  DelayStore& operator=(const DelayStore&) = delete;
  ~DelayStore() { Stop(); }

  // Mounts delay_fs at `mountpoint`, serving `source`, with `args` (its options) added; whether it
  // was mounted within 10 s.
  bool Start(const std::string& source, const std::string& mountpoint,
             const std::vector<std::string>& args) {
    mountpoint_ = mountpoint;
    std::vector<std::string> argv = {CCFS_DELAY_FS, source, mountpoint};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = Spawn(argv, 2, 2);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!IsMounted(mountpoint) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return IsMounted(mountpoint);
  }
  // Unmounts it and waits for delay_fs to exit. Call after ccfs, which reads it, is unmounted.
  void Stop() {
    if (pid_ <= 0) return;
    if (IsMounted(mountpoint_)) RunCommand({"fusermount3", "-u", mountpoint_}, 10);
    Reap(pid_, 10);
    pid_ = -1;
  }

 private:
  std::string mountpoint_;
  pid_t pid_ = -1;
};

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_FS_DELAY_STORE_H_
