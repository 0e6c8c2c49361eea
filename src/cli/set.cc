// `ccfs set MOUNTPOINT key=value...`: changes live settings of a running mount.
//
// All pairs go to MOUNTPOINT/.ccfs/control in a single write(), because the daemon checks every
// line of a write before applying any: one write makes the change all-or-nothing (no half-applied
// compressor/level pair). The price is that the daemon's answer to a bad pair is a bare EINVAL
// for the whole write; to still name the key, the command replays the pairs through the same
// config rules the daemon uses (ApplyKeyValue, IsLiveKey), starting from the mount's current
// settings as stats.json reports them, and shows the first one they reject.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ccfs/config.h"
#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "cli/command.h"
#include "stats/stats_json.h"

namespace ccfs {
namespace {

struct SetArgs {
  std::string mountpoint;
  std::vector<std::string> pairs;
};

struct Pair {
  std::string key;
  std::string value;
};

// Splits "key=value"; the key is a config key's shape (lower-case letters, digits, '_').
Status ParsePair(const std::string& text, Pair* out) {
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
  if (value.empty()) return Status::InvalidArgument("'" + text + "': " + key + " has no value");
  if (value.find_first_of("\n\r") != std::string::npos) {
    return Status::InvalidArgument(key + ": the value must be on one line");
  }
  out->key = std::move(key);
  out->value = std::move(value);
  return Status::Ok();
}

// Why the daemon refused `pairs`, by the rules it applies; empty if those rules accept them all.
std::string ExplainRejection(const std::string& mountpoint, const std::vector<Pair>& pairs) {
  Options current;
  CacheStats stats;
  if (ReadMountStats(mountpoint, &stats).ok()) {
    current.compressor = static_cast<CodecKind>(stats.compressor);
    current.compression_level = stats.compression_level;
    current.compressed_percent = stats.compressed_percent;
    if (stats.page_size != 0) current.page_size = stats.page_size;
    if (stats.memory_bytes != 0) current.memory = stats.memory_bytes;
  }
  for (const Pair& p : pairs) {
    if (!IsKnownKey(p.key)) return p.key + " is not a ccfs key";
    if (!IsLiveKey(p.key)) return p.key + " cannot change on a running mount; it needs a remount";
  }
  // Pairs apply in order, so "compressor=zstd compression_level=15" is judged as zstd level 15.
  for (const Pair& p : pairs) {
    Status s = ApplyKeyValue(p.key, p.value, "", &current);
    if (!s.ok()) return s.message();
  }
  Status s = current.Validate();
  if (!s.ok()) return s.message();
  return std::string();
}

bool ShowsInStats(const std::string& key) {
  return key == "compressed_percent" || key == "compressor" || key == "compression_level";
}

int RunSet(const SetArgs& args) {
  std::vector<Pair> pairs;
  std::string text;
  for (const std::string& arg : args.pairs) {
    Pair p;
    Status s = ParsePair(arg, &p);
    if (!s.ok()) {
      std::fprintf(stderr, "ccfs set: %s\n", s.message().c_str());
      return 2;
    }
    text += p.key + "=" + p.value + "\n";
    pairs.push_back(std::move(p));
  }

  // Only a ccfs mount has .ccfs/stats.json; checking it first gives a plain directory (or a dead
  // mount) its own message instead of a confusing one about the control file.
  CacheStats stats;
  Status s = ReadMountStats(args.mountpoint, &stats);
  if (!s.ok()) {
    std::fprintf(stderr, "ccfs set: %s\n", s.ToString().c_str());
    return 1;
  }

  const std::string control = args.mountpoint + "/.ccfs/control";
  int fd = open(control.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "ccfs set: %s: %s\n", control.c_str(), std::strerror(errno));
    return 1;
  }
  ssize_t n;
  do {
    n = write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  int err = errno;
  close(fd);
  if (n < 0) {
    if (err == EINVAL) {
      std::string why = ExplainRejection(args.mountpoint, pairs);
      if (why.empty()) why = "the daemon rejected the settings (see its log)";
      std::fprintf(stderr, "ccfs set: %s; nothing was changed\n", why.c_str());
    } else {
      std::fprintf(stderr, "ccfs set: %s: %s\n", control.c_str(), std::strerror(err));
    }
    return 1;
  }
  if (static_cast<size_t>(n) != text.size()) {
    std::fprintf(stderr, "ccfs set: %s: only %zd of %zu bytes were taken\n", control.c_str(), n,
                 text.size());
    return 1;
  }

  bool show = false;
  for (const Pair& p : pairs) {
    std::printf("%s = %s\n", p.key.c_str(), p.value.c_str());
    show |= ShowsInStats(p.key);
  }
  if (show) {
    // What the engine reports now: the daemon applied the write before answering it.
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
