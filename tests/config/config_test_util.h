// Options for config tests.
#ifndef CCFS_TESTS_CONFIG_CONFIG_TEST_UTIL_H_
#define CCFS_TESTS_CONFIG_CONFIG_TEST_UTIL_H_

#include <string>

#include "ccfs/config.h"
#include "ccfs/options.h"

namespace ccfs {

// The message ApplyOptionList gives for `list` over default options ("" if it is accepted).
inline std::string RefusalOf(const std::string& list) {
  Options o;
  Status s = ApplyOptionList(list, "-o", &o, nullptr);
  return s.ok() ? std::string() : s.message();
}

// Options with every field away from its default and valid, so a test can tell whether a key
// was applied.
inline Options AllNonDefault() {
  Options o;
  o.memory = 64ull << 20;
  o.compressed_percent = 40;
  o.page_size = 16384;
  o.raw_tier = "kernel";
  o.kernel_evict = false;
  o.estimate_splits = false;
  o.auto_interval = 0.5;
  o.auto_max_step = 5;
  o.readahead = 256 << 10;
  o.compressor = CodecKind::kZstd;
  o.compression_level = 3;
  o.compress_threads = 3;
  o.min_savings_percent = 20.25;
  o.admission_filter = false;
  o.evict_batch_percent = 5.5;
  o.low_watermark_percent = 7;
  o.probation = false;
  o.request_threads = 4;
  o.misses_in_flight = 5;
  o.pin_threads = true;
  o.allow_other = true;
  o.attr_timeout = 2.5;
  o.entry_timeout = 3.5;
  o.negative_timeout = 0.5;
  o.close_to_open = false;
  o.passthrough = true;
  o.readdirplus = false;
  o.max_open_files = 1000;
  o.transport = "uring";
  o.metrics = "127.0.0.1:9567";
  o.pin = "etc/hostname";  // a small file that exists under "/", the dataset of the live-key tests
  o.pin_percent = 30;
  o.persist = "/var/cache/ccfs";
  o.persist_interval = 30;
  o.sftp = "files:/export";
  o.ssh_config = "/etc/ccfs/ssh_config";
  o.sftp_connections = 8;
  return o;
}

}  // namespace ccfs

#endif  // CCFS_TESTS_CONFIG_CONFIG_TEST_UTIL_H_
