// The mount target (trace/replay_target.h): page reads through a ccfs mount, so a replay measures
// what an application would see, FUSE trip included; the daemon's counters come from the mount.
#include "client/mount_client.h"
#include "trace/replay_target.h"

namespace ccfs {

namespace {

class MountTarget final : public ReplayTarget {
 public:
  Status Open(const Dataset& dataset, bool writable) {
    mountpoint_ = dataset.root();
    return files_.Open(dataset, writable);
  }

  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) override {
    return files_.Read(file, offset, len, buf);
  }
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) override {
    return files_.Write(file, offset, buf, len);
  }
  bool Counters(CacheStats* stats) override {
    return ReadMountStatsFile(mountpoint_, stats).ok();
  }

 private:
  std::string mountpoint_;
  DescriptorFiles files_;
};

}  // namespace

Status OpenMountTarget(const Dataset& dataset, bool writable,
                       std::unique_ptr<ReplayTarget>* target) {
  return OpenTargetAs<MountTarget>(target, dataset, writable);
}

}  // namespace ccfs
