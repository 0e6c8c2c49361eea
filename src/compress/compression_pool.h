// CompressionPool: worker threads that run compression tasks, each with its own Codec.
//
// The evictor cuts a batch of victims into a few tasks and submits them; each worker runs a task
// with its own codec (one lz4/zstd context per thread, created once, recreated only when
// SetCodec() changes kind or level). Submit() never blocks on the work itself.
//
// Ownership: the pool owns its threads and each worker's Codec; a task gets the codec by reference
// for the length of the call only and must not keep it.
//
// Thread-safety: all methods may be called from any thread. Tasks must not call Wait() (it would
// wait for itself) and must not throw. Tasks run in FIFO order of submission, but several run at
// once on different workers, so a task must not rely on an earlier one having finished.
#ifndef CCFS_COMPRESS_COMPRESSION_POOL_H_
#define CCFS_COMPRESS_COMPRESSION_POOL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ccfs/codec.h"

namespace ccfs {

class CompressionPool {
 public:
  using Task = std::function<void(Codec& codec)>;

  // Starts `threads` workers (0 or negative = one per online CPU but one, at least one) using
  // codec `kind` at `level`; each worker runs only on `cpus` if that is not empty.
  CompressionPool(int threads, CodecKind kind, int level, std::vector<int> cpus = {});
  // Finishes queued tasks, then joins the workers.
  ~CompressionPool();

  void Submit(Task task);
  // Workers switch to this codec before their next task; tasks already running finish with the
  // old one. A call that changes nothing does not rebuild any codec.
  void SetCodec(CodecKind kind, int level);
  // Runs the oldest queued task, if there is one, on the calling thread (with a codec of its own,
  // at the pool's nice value), and returns whether it ran one: a thread that would otherwise wait
  // for the pool (a warm-up) lends it a CPU. Its CPU time is counted in cpu_ns().
  bool RunOne();
  // Blocks until the queue is empty and no task is running.
  void Wait();
  int threads() const;
  // Tasks queued or running now.
  size_t pending() const;
  // Codecs the workers have built so far: one per worker at start-up, plus one per worker that
  // has taken a task since each SetCodec() that changed the codec. Shows that contexts are reused.
  uint64_t codecs_built() const;
  // CPU time the workers have used so far, all of it (tasks, taking them, building codecs), read
  // from their thread CPU clocks (util/thread_cpu.h): nothing is measured on the workers; plus
  // what the tasks run by RunOne took.
  uint64_t cpu_ns() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccfs

#endif  // CCFS_COMPRESS_COMPRESSION_POOL_H_
