// `ccfs set MOUNTPOINT key=value...`: changes live settings of a running mount.
//
// All pairs go to MOUNTPOINT/.ccfs/control in a single write (client/mount_client.h), because the
// daemon checks every line of a write before applying any: one write makes the change
// all-or-nothing (no half-applied compressor/level pair). A refusal comes back from the daemon
// naming the key and the reason; the command shows it as it is, since only the daemon knows the
// mount's current settings and its rules.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "cli/command.h"
#include "client/mount_client.h"
#include "config/keys.h"

namespace ccfs {
namespace {

struct SetArgs {
  std::string mountpoint;
  std::vector<std::string> pairs;
};

// Splits "key=value"; the key is a config key's shape (lower-case letters, digits, '_').
Status ParsePair(const std::string& text, LiveSetting* out) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("'" + text + "' is not of the form key=value");
  }
  std::string key = text.substr(0, eq);
  for (char c : key) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return Status::InvalidArgument("'" + text + "': '" + key + "' is not a key name");
    }
  }
  std::string value = text.substr(eq + 1);
  // Only keys whose empty value means something take one ("pin=" unpins everything, "metrics="
  // is off); for any other an empty value is a typo, refused before anything is sent.
  const config::KeySpec* spec = config::FindKey(key);
  if (value.empty() &&
      (spec == nullptr || (spec->rule.kind != config::Rule::kPinPaths &&
                           spec->rule.kind != config::Rule::kListenAddress))) {
    return Status::InvalidArgument("'" + text + "': " + key + " has no value");
  }
  if (value.find_first_of("\n\r") != std::string::npos) {
    return Status::InvalidArgument(key + ": the value must be on one line");
  }
  out->key = std::move(key);
  out->value = std::move(value);
  return Status::Ok();
}

bool ShowsInStats(const std::string& key) {
  return key == "compressed_percent" || key == "compressor" || key == "compression_level";
}

int RunSet(const SetArgs& args) {
  std::vector<LiveSetting> pairs;
  for (const std::string& arg : args.pairs) {
    LiveSetting p;
    Status s = ParsePair(arg, &p);
    if (!s.ok()) {
      std::fprintf(stderr, "ccfs set: %s\n", s.message().c_str());
      return 2;
    }
    pairs.push_back(std::move(p));
  }

  Status s = CheckMount(args.mountpoint);
  if (!s.ok()) {
    std::fprintf(stderr, "ccfs set: %s\n", s.ToString().c_str());
    return 1;
  }
  s = ApplyLiveSettings(args.mountpoint, pairs);
  if (!s.ok()) {
    if (s.code() == Status::Code::kInvalidArgument) {  // the daemon refused
      std::fprintf(stderr, "ccfs set: %s; nothing was changed\n", s.message().c_str());
    } else {
      std::fprintf(stderr, "ccfs set: %s\n", s.ToString().c_str());
    }
    return 1;
  }

  bool show = false;
  for (const LiveSetting& p : pairs) {
    std::printf("%s = %s\n", p.key.c_str(), p.value.c_str());
    show |= ShowsInStats(p.key);
  }
  if (show) {
    // What the engine reports now: the daemon applied the write before answering it.
    CacheStats stats;
    s = ReadMountStats(args.mountpoint, &stats);
    if (!s.ok()) {
      std::fprintf(stderr, "ccfs set: applied, but reading back failed: %s\n",
                   s.ToString().c_str());
      return 1;
    }
    std::printf("now: compressed_percent=%d compressor=%s compression_level=%d\n",
                stats.compressed_percent, CodecName(static_cast<CodecKind>(stats.compressor)),
                stats.compression_level);
  }
  return 0;
}

CommandRegistrar reg_set(
    "set", "change live settings of a mount (compressed_percent, compressor, ...)",
    [](CLI::App* app) {
      auto args = std::make_shared<SetArgs>();
      app->add_option("mountpoint", args->mountpoint, "a mounted ccfs file system")->required();
      app->add_option("settings", args->pairs, "key=value pairs, applied together or not at all")
          ->required();
      return [args] { return RunSet(*args); };
    });

}  // namespace
}  // namespace ccfs
