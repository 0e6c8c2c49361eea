#include "config/memory_bound.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "ccfs/config.h"
#include "util/cgroup_memory.h"
#include "util/proc_status.h"

namespace ccfs {

HostMemory HostMemory::Read() {
  HostMemory h;
  h.ram_bytes = ProcMeminfoBytes("MemTotal:");
  CgroupMemory m;
  if (ReadCgroupMemory(&m)) {
    h.cgroup_limit_bytes = m.limit;
    h.cgroup_unreclaimable_bytes = m.usage > m.file ? m.usage - m.file : 0;
  }
  h.self_anon_bytes = ProcStatusBytes(getpid(), "RssAnon:");
  return h;
}

Status CheckMemoryFits(const Options& o, const HostMemory& host) {
  const std::string memory = FormatSize(o.memory);
  if (host.ram_bytes != 0 && o.memory > host.ram_bytes) {
    return Status::InvalidArgument(fmt::format(
        "memory = {}: more than this machine's RAM ({}, MemTotal in /proc/meminfo); the cache's "
        "pages cannot be swapped out, so such a budget would end in the OOM killer",
        memory, FormatSize(host.ram_bytes)));
  }
  const uint64_t limit = host.cgroup_limit_bytes;
  if (limit == 0) return Status::Ok();
  if (o.memory > limit) {
    return Status::InvalidArgument(fmt::format(
        "memory = {}: more than the limit of the memory cgroup this process runs in ({}); the "
        "cgroup's OOM killer would end the daemon",
        memory, FormatSize(limit)));
  }
  // What the daemon holds itself; in kernel mode the kernel's share is page cache, which the
  // cgroup reclaims (and the daemon shrinks its ledger to the room left: fuse/kernel_cache.h).
  const uint64_t tiers = o.memory - o.kernel_budget();
  if (tiers + kDaemonOwnBytes <= limit) return Status::Ok();
  if (o.kernel_raw_tier()) {
    return Status::InvalidArgument(fmt::format(
        "memory = {}, compressed_percent = {}: the daemon's tiers ({} compressed, {} staging) and "
        "its own memory (about {}) need {}, more than the limit of the memory cgroup it runs in "
        "({}), whose OOM killer would end the mount; lower compressed_percent or memory, or raise "
        "the cgroup's limit",
        memory, o.compressed_percent, FormatSize(o.compressed_budget()),
        FormatSize(o.raw_budget()), FormatSize(kDaemonOwnBytes),
        FormatSize(tiers + kDaemonOwnBytes), FormatSize(limit)));
  }
  return Status::InvalidArgument(fmt::format(
      "memory = {}: the daemon's tiers and its own memory (about {}) need {}, more than the "
      "limit of the memory cgroup it runs in ({}), whose OOM killer would end the mount; lower "
      "memory to at most {} or raise the cgroup's limit",
      memory, FormatSize(kDaemonOwnBytes), FormatSize(tiers + kDaemonOwnBytes), FormatSize(limit),
      FormatSize(limit > kDaemonOwnBytes ? limit - kDaemonOwnBytes : 0)));
}

Status CheckSplitFits(const Options& o, const HostMemory& host, uint64_t tiers_now) {
  Status st = CheckMemoryFits(o, host);
  if (!st.ok() || host.cgroup_limit_bytes == 0) return st;
  const uint64_t own = std::max(
      host.self_anon_bytes > tiers_now ? host.self_anon_bytes - tiers_now : 0, kDaemonOwnBytes);
  // Charge made before the daemon was moved into the cgroup stays where it was made: the cgroup
  // may hold less of the daemon than its RssAnon, and then nothing is counted as the readers'.
  const uint64_t readers = host.cgroup_unreclaimable_bytes > host.self_anon_bytes
                               ? host.cgroup_unreclaimable_bytes - host.self_anon_bytes
                               : 0;
  const uint64_t tiers = o.memory - o.kernel_budget();
  const uint64_t need = own + readers + tiers + kSplitHeadroomBytes;
  if (need <= host.cgroup_limit_bytes) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "compressed_percent = {}: the daemon's tiers ({}), its own memory ({}), its readers' ({}) "
      "and {} of room need {}, more than the limit of the memory cgroup it is in now ({})",
      o.compressed_percent, FormatSize(tiers), FormatSize(own), FormatSize(readers),
      FormatSize(kSplitHeadroomBytes), FormatSize(need), FormatSize(host.cgroup_limit_bytes)));
}

}  // namespace ccfs
