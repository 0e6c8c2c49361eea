// RunSweep: the points one after the other, the mount's split put back, then the baseline.
#include "trace/replay_sweep.h"

#include <string>

#include <fmt/format.h>

#include "client/mount_client.h"

namespace ccfs {

namespace {

Status SetLivePercent(const std::string& mount, int percent) {
  return ApplyLiveSettings(mount, {{"compressed_percent", std::to_string(percent)}});
}

// The page cache alone on `dir`, at the sweep's memory.
ReplayOptions BaselineOptions(const ReplayOptions& options, const std::string& dir) {
  ReplayOptions base = options;
  base.mode = ReplayMode::kDirectory;
  base.target = dir;
  base.cgroup_memory = options.engine.memory;
  if (options.mode == ReplayMode::kMount && options.cgroup_memory) {
    base.cgroup_memory = options.cgroup_memory;
  }
  return base;
}

}  // namespace

Status RunSweep(const SweepRequest& request, SweepReport* report) {
  ReplayOptions options = request.replay;
  const bool live = options.mode == ReplayMode::kMount;
  int original = -1;
  if (live) {
    CacheStats stats;
    if (ReadMountStatsFile(options.target, &stats).ok()) original = stats.compressed_percent;
  }
  for (int percent : request.percents) {
    if (live) {
      Status s = SetLivePercent(options.target, percent);
      if (!s.ok()) return s;
    } else {
      options.engine.compressed_percent = percent;
    }
    SweepPoint point;
    point.percent = percent;
    Status s = RunReplay(options, &point.result);
    if (!s.ok()) {
      report->failed_run = fmt::format("compressed_percent={}", percent);
      return s;
    }
    if (request.on_point) request.on_point(point);
    report->points.push_back(std::move(point));
  }
  if (original >= 0) {
    Status s = SetLivePercent(options.target, original);
    if (!s.ok() && request.on_restore_failed) request.on_restore_failed(s);
  }
  if (!request.baseline.empty()) {
    const ReplayOptions base = BaselineOptions(options, request.baseline);
    SweepPoint point;
    point.cgroup_memory = base.cgroup_memory;
    Status s = RunReplay(base, &point.result);
    if (!s.ok()) {
      report->failed_run = "baseline " + request.baseline;
      return s;
    }
    if (request.on_point) request.on_point(point);
    report->points.push_back(std::move(point));
  }
  return Status::Ok();
}

}  // namespace ccfs
