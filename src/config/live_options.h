// Live settings of a running mount: what changed between two Options, which of those changes
// PageCache::Reconfigure takes without a remount, and how to name a setting in a log line. Used by
// .ccfs/control and SIGHUP (src/fuse/) and by PageCache::Reconfigure to refuse the rest.
//
// Every function walks the key table (config/keys.h), so a new key is compared, copied and
// described without a change here. Pure functions; thread-safe.
#ifndef CCFS_CONFIG_LIVE_OPTIONS_H_
#define CCFS_CONFIG_LIVE_OPTIONS_H_

#include <string>
#include <vector>

#include "ccfs/options.h"

namespace ccfs {

// Keys whose values differ between `a` and `b`, in key-table order.
std::vector<std::string> ChangedKeys(const Options& a, const Options& b);

// Keys whose values differ between `current` and `wanted` and that are not live (config.h
// IsLiveKey): the changes that need a remount. In key-table order.
std::vector<std::string> RemountKeys(const Options& current, const Options& wanted);

// `current` with every live key taken from `wanted`.
Options WithLiveKeys(const Options& current, const Options& wanted);

// "key = value" as people read it (sizes with units: "memory = 256MiB"), for log lines; an
// unknown key is returned as it is.
std::string DescribeKey(const Options& options, const std::string& key);

}  // namespace ccfs

#endif  // CCFS_CONFIG_LIVE_OPTIONS_H_
