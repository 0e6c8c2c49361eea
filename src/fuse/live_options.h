// Live settings of a running daemon: what changed between two Options, and which of those changes
// PageCache::Reconfigure can take without a remount. Used by .ccfs/control and by SIGHUP.
//
// Pure functions; thread-safe.
#ifndef CCFS_FUSE_LIVE_OPTIONS_H_
#define CCFS_FUSE_LIVE_OPTIONS_H_

#include <string>
#include <vector>

#include "ccfs/options.h"

namespace ccfs {

// Keys whose values differ between `a` and `b`, in Options order.
std::vector<std::string> ChangedKeys(const Options& a, const Options& b);

// `current` with every live key (config.h IsLiveKey) taken from `wanted`.
Options WithLiveKeys(const Options& current, const Options& wanted);

// "key = value" as the config file would spell it, for log lines.
std::string DescribeKey(const Options& options, const std::string& key);

}  // namespace ccfs

#endif  // CCFS_FUSE_LIVE_OPTIONS_H_
