// Live settings, over the key table. Fields are compared as values (not as the text people see:
// FormatSize rounds, so two memory sizes can print alike and still differ).
#include "config/live_options.h"

#include <fmt/format.h>

#include "config/keys.h"

namespace ccfs {

std::vector<std::string> ChangedKeys(const Options& a, const Options& b) {
  std::vector<std::string> keys;
  for (const config::KeySpec& key : config::AllKeys()) {
    if (!config::SameField(key, a, b)) keys.emplace_back(key.name);
  }
  return keys;
}

std::vector<std::string> RemountKeys(const Options& current, const Options& wanted) {
  std::vector<std::string> keys;
  for (const config::KeySpec& key : config::AllKeys()) {
    if (!key.live && !config::SameField(key, current, wanted)) keys.emplace_back(key.name);
  }
  return keys;
}

Options WithLiveKeys(const Options& current, const Options& wanted) {
  Options out = current;
  for (const config::KeySpec& key : config::AllKeys()) {
    if (key.live) config::CopyField(key, wanted, &out);
  }
  return out;
}

std::string DescribeKey(const Options& options, const std::string& key) {
  const config::KeySpec* spec = config::FindKey(key);
  if (spec == nullptr) return key;
  return fmt::format("{} = {}", key, config::FormatValue(*spec, options, config::ValueStyle::kDisplay));
}

}  // namespace ccfs
