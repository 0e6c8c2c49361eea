// Internals shared by options.cc (validation) and config.cc (parsing): the table of keys and
// per-key validation. Not a contract; nothing outside src/config/ should include this.
#ifndef CCFS_CONFIG_OPTIONS_INTERNAL_H_
#define CCFS_CONFIG_OPTIONS_INTERNAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/status.h"

namespace ccfs::config_internal {

enum class KeyType { kSize, kInt, kDouble, kBool, kCodec };

struct KeyInfo {
  std::string name;   // the key, identical in TOML, -o and .ccfs/control
  std::string table;  // the TOML table it lives in: cache, compression, eviction or daemon
  KeyType type;
  bool live;          // PageCache::Reconfigure can change it without a remount
  std::string doc;    // one line for RenderConfig: meaning and unit
};

// Every key, in documentation order.
const std::vector<KeyInfo>& AllKeys();
// The key named `name`, or nullptr.
const KeyInfo* FindKey(std::string_view name);

// Checks the rule(s) of one key against the whole options (some rules involve other keys).
// The message reads "key = value: rule".
Status ValidateOptionKey(const Options& options, const std::string& key);
// Validate() with the name of the first failing key.
Status ValidateAllKeys(const Options& options, std::string* failed_key);
// The other keys a key's rule depends on (including the key itself), or empty.
const std::vector<std::string>& RelatedKeys(const std::string& key);
// For integer keys: the allowed range given the rest of `options` (compression_level depends on
// compressor). False for keys that are not integers.
bool IntKeyRange(const Options& options, const std::string& key, long long* lo, long long* hi);
// The allowed compression_level range for a codec.
void CodecLevelRange(CodecKind kind, int* lo, int* hi);

}  // namespace ccfs::config_internal

#endif  // CCFS_CONFIG_OPTIONS_INTERNAL_H_
