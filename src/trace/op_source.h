// OpSource: turns an access law (or a recorded trace) and a data set into the stream of page
// operations a replay issues.
//
// Operation i of a run is a pure function of (seed, i) for a generated stream: whichever thread
// asks for it, in whatever order, gets the same page, so runs with any number of client threads
// issue the same operations, and two programs built on OpSource (`ccfs replay`, the in-process
// benchmarks in bench/) replay the identical trace for the same law, seed and page size.
// For a recorded trace, operation i is entry i of the trace cut at page boundaries, wrapping
// around at the end.
//
// Every operation covers at most one page: offset is page-aligned for generated operations, and
// length is the page size, or less for the last page of a file (or a trace record's piece).
//
// Ownership: borrows the Dataset and the AccessDistribution; both must outlive the OpSource.
// Thread-safety: SetTrace before sharing; after that Get() may be called from any thread.
#ifndef CCFS_TRACE_OP_SOURCE_H_
#define CCFS_TRACE_OP_SOURCE_H_

#include <cstdint>
#include <vector>

#include "model/distribution.h"
#include "trace/dataset.h"
#include "trace/trace_file.h"

namespace ccfs {

// One page operation: `length` bytes of file #`file` (an index into Dataset::files()) at `offset`.
struct PageOp {
  uint32_t file;
  uint64_t offset;
  uint32_t length;
  TraceOp op;
};

class OpSource {
 public:
  // A generated stream: pages drawn from `dist` (over dataset.pages()), a share `write_ratio` of
  // them writes. REQUIRES: dist was made for dataset.pages() pages; 0 <= write_ratio <= 1.
  OpSource(const Dataset& dataset, const AccessDistribution* dist, uint64_t seed,
           double write_ratio);

  // Replays `records` (resolved against the same data set) instead of drawing from the law; parts
  // of a record beyond its file's end are dropped.
  void SetTrace(const std::vector<TraceRecord>& records);
  // Page operations of the trace given to SetTrace (0 for a generated stream).
  uint64_t trace_ops() const { return ops_.size(); }

  // A phase-change stream: operation i belongs to phase p = i / phase_ops; phase p draws its rank
  // from laws[p % laws.size()] and scatters it with a permutation of its own keyed by (seed, p),
  // so the hot set moves at every phase and the law changes when several are given. Phase 0 is
  // the stream of laws[0] alone. Still a pure function of (seed, i). Not with SetTrace.
  // REQUIRES: phase_ops > 0; laws non-empty, each made for dataset.pages() pages, outliving this.
  void SetPhases(uint64_t phase_ops, std::vector<const AccessDistribution*> laws);

  // Operation i of the run.
  PageOp Get(uint64_t i) const;

 private:
  const Dataset& dataset_;
  const AccessDistribution* dist_;
  uint64_t seed_;
  double write_ratio_;
  std::vector<PageOp> ops_;
  uint64_t phase_ops_ = 0;
  std::vector<const AccessDistribution*> laws_;
};

// Operations a replay runs before measuring when none are asked for: three times the memory in
// pages (so the cache has filled and turned over), at most ten times the data set's pages.
// `ccfs replay` then goes on while the cache is still filling (trace/replay_phases.h).
uint64_t DefaultWarmupOps(uint64_t memory_bytes, uint32_t page_size, uint64_t dataset_pages);

}  // namespace ccfs

#endif  // CCFS_TRACE_OP_SOURCE_H_
