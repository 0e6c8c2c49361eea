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

namespace {

// What the cgroup the daemon is in holds beside its tiers and the kernel's pages, as
// CheckSplitFits counts it.
struct BesideTiers {
  uint64_t own = 0;      // the daemon's own memory: RssAnon beyond its tiers
  uint64_t readers = 0;  // the cgroup's other unreclaimable charge
};

// `floor`: the least own memory counted (a check that must not let the daemon outgrow the cgroup
// takes the mount's allowance; an estimate takes what is measured, when it is).
BesideTiers CountBesideTiers(const HostMemory& host, uint64_t tiers_now, uint64_t floor) {
  BesideTiers b;
  b.own = std::max(host.self_anon_bytes > tiers_now ? host.self_anon_bytes - tiers_now : 0, floor);
  // Charge made before the daemon was moved into the cgroup stays where it was made: the cgroup
  // may hold less of the daemon than its RssAnon, and then nothing is counted as the readers'.
  b.readers = host.cgroup_unreclaimable_bytes > host.self_anon_bytes
                  ? host.cgroup_unreclaimable_bytes - host.self_anon_bytes
                  : 0;
  return b;
}

}  // namespace

Status CheckSplitFits(const Options& o, const HostMemory& host, uint64_t tiers_now) {
  Status st = CheckMemoryFits(o, host);
  if (!st.ok() || host.cgroup_limit_bytes == 0) return st;
  const BesideTiers b = CountBesideTiers(host, tiers_now, kDaemonOwnBytes);
  const uint64_t tiers = o.memory - o.kernel_budget();
  const uint64_t need = b.own + b.readers + tiers + kSplitHeadroomBytes;
  if (need <= host.cgroup_limit_bytes) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "compressed_percent = {}: the daemon's tiers ({}), its own memory ({}), its readers' ({}) "
      "and {} of room need {}, more than the limit of the memory cgroup it is in now ({})",
      o.compressed_percent, FormatSize(tiers), FormatSize(b.own), FormatSize(b.readers),
      FormatSize(kSplitHeadroomBytes), FormatSize(need), FormatSize(host.cgroup_limit_bytes)));
}

uint64_t KernelShareBytes(const Options& o, const HostMemory& host, uint64_t tiers_now) {
  const uint64_t budget = o.kernel_budget();
  if (host.cgroup_limit_bytes == 0) return budget;
  const BesideTiers b =
      CountBesideTiers(host, tiers_now, host.self_anon_bytes > 0 ? 0 : kDaemonOwnBytes);
  const uint64_t beside = b.own + b.readers + (o.memory - budget);
  const uint64_t room = host.cgroup_limit_bytes > beside ? host.cgroup_limit_bytes - beside : 0;
  return std::min(budget, room);
}

}  // namespace ccfs
