// tiered_compare: ccfs's engine in-process on a `ccfs mkdata` data set and the replay's trace, the
// ccfs half of the RocksDB comparison (bench/rocksdb_tiered runs both halves in one process; this
// program needs no RocksDB). Prints one JSON object: hit ratio by tier, µs per buffer measured
// around each PageCache::Read on one client thread, stalls and compression work.
//
//   tiered_compare --data DIR --memory 64MiB --percent 50 --compressor lz4 --dist pareto
//                  [--ops N] [--warmup N] [--compress-threads K]
#include <cstdio>

#include "tiered_harness.h"

int main(int argc, char** argv) {
  CLI::App app{"tiered_compare: ccfs engine in-process on the replay trace (JSON out)"};
  tiered::Args args;
  args.AddTo(app);
  CLI11_PARSE(app, argc, argv);
  if (!args.Finish()) return 2;
  tiered::Workload w;
  if (!w.Open(args)) return 1;
  tiered::CcfsEngineCache ccfs;
  if (!ccfs.Open(w, args)) return 1;
  nlohmann::json j = tiered::Run(&ccfs, w, args);
  j["compress_threads"] = args.compress_threads;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
