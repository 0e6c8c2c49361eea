// ccfs mount [--config FILE] [-o key=value[,...]] [-f|--foreground] DATASET MOUNTPOINT
// Also reached as "ccfs DATASET MOUNTPOINT -o opts" (the form mount.fuse3 uses; see main.cc).
#include <memory>
#include <string>

#include "ccfs/options.h"
#include "cli/command.h"
#include "config/keys.h"
#include "fuse/daemon.h"

namespace ccfs {
namespace {

// Every key with its default, wrapped for a terminal, and where each one is described.
std::string KeysFooter() {
  std::string out =
      "Keys, with their defaults (* = live: `ccfs set` changes it on a running mount); `man "
      "ccfs.toml` gives each one's meaning, range and unit:\n";
  std::string line = " ";
  const Options defaults = MountDefaults();
  for (const config::KeySpec& key : config::AllKeys()) {
    std::string item = " " + std::string(key.name) + "=" +
                       config::FormatValue(key, defaults, config::ValueStyle::kDisplay) +
                       (key.live ? "*" : "");
    if (line.size() + item.size() > 78) {
      out += line + "\n";
      line = " ";
    }
    line += item;
  }
  return out + line;
}

CommandRegistrar reg_mount("mount", "mount DATASET at MOUNTPOINT through the tiered page cache",
                     [](CLI::App* app) {
  auto args = std::make_shared<DaemonArgs>();
  app->footer(KeysFooter());
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
