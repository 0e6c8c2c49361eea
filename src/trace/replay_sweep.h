// A replay sweep (`ccfs replay --sweep`): the same replay (replay.h) at each compressed_percent of
// a list, and optionally the page cache alone at equal RAM as the baseline.
//
// Each point is one RunReplay. In engine mode the point sets the engine's compressed_percent; on a
// mount it is set live through the control file (client/mount_client.h ApplyLiveSettings), and
// once the points are done the mount is set back to the compressed_percent it had before (a live
// sweep leaves the mount as it found it). The baseline replays a plain directory in a memory
// cgroup of the cache's memory (on a mount, which keeps its memory to itself, the memory given as
// replay.cgroup_memory).
//
// A sweep takes minutes, so each point is handed to the caller as soon as it is measured
// (on_point), not only in the report at the end; the first failure ends the sweep.
//
// Thread-safety: as RunReplay: one sweep at a time per target; the callbacks are called on the
// calling thread.
#ifndef CCFS_TRACE_REPLAY_SWEEP_H_
#define CCFS_TRACE_REPLAY_SWEEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ccfs/status.h"
#include "trace/replay.h"

namespace ccfs {

struct SweepPoint {
  int percent = -1;            // the point's compressed_percent; -1: the baseline
  uint64_t cgroup_memory = 0;  // the baseline: its memory cgroup's limit
  ReplayResult result;
};

struct SweepRequest {
  // The replay at each point. REQUIRES: mode is kEngine or kMount.
  ReplayOptions replay;
  std::vector<int> percents;
  // A plain directory to replay last (empty: no baseline). REQUIRES: on a mount, with
  // replay.cgroup_memory set.
  std::string baseline;
  // Each point as it is measured, the baseline last (may be empty).
  std::function<void(const SweepPoint&)> on_point;
  // Setting a mount's compressed_percent back failed; the sweep goes on (may be empty).
  std::function<void(const Status&)> on_restore_failed;
};

struct SweepReport {
  std::vector<SweepPoint> points;  // in the order measured, the baseline last
  // When RunSweep fails: the replay that failed, "compressed_percent=N" or "baseline DIR"; empty
  // if setting a mount's compressed_percent failed.
  std::string failed_run;
};

// Runs the points in order, then the baseline. Errors: the first replay's, or the mount's refusal
// of a compressed_percent (report->failed_run says which).
Status RunSweep(const SweepRequest& request, SweepReport* report);

}  // namespace ccfs

#endif  // CCFS_TRACE_REPLAY_SWEEP_H_
