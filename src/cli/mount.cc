// ccfs mount [--config FILE] [-o key=value[,...]] [-f|--foreground] DATASET MOUNTPOINT
// Also reached as "ccfs DATASET MOUNTPOINT -o opts" (the form mount.fuse3 uses; see main.cc).
#include <memory>

#include "cli/command.h"
#include "fuse/daemon.h"

namespace ccfs {
namespace {

CommandRegistrar reg("mount", "mount DATASET at MOUNTPOINT through the tiered page cache",
                     [](CLI::App* app) {
  auto args = std::make_shared<DaemonArgs>();
  app->add_option("--config", args->config_file,
                  "TOML config file (conf/ccfs.toml documents every key)");
  app->add_option("-o", args->option_lists,
                  "key=value[,key=value...]: ccfs keys (they win over --config) and standard "
                  "mount options (ro, noatime, allow_other, ...); may be repeated")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app->add_flag("-f,--foreground", args->foreground,
                "stay in the foreground and log to stderr (otherwise return once mounted)");
  app->add_option("dataset", args->dataset, "directory to serve")->required();
  app->add_option("mountpoint", args->mountpoint, "where to mount it")->required();
  return [args] { return RunDaemon(*args); };
});

}  // namespace
}  // namespace ccfs
