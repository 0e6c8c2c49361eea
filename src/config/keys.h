// The key table: every configuration key of ccfs, once.
//
// One KeySpec per key says everything the rest of config/ needs: its name, the TOML table it lives
// in, which Options field holds it (whose C++ type is the key's type), its rule, whether it can
// change on a running mount, and one line of meaning for RenderConfig. From it:
//   - config.cc parses TOML values, -o items and .ccfs/control lines (SetFromToml / SetFromText);
//   - options.cc validates (Options::Validate, CheckKey);
//   - config.cc renders (RenderConfig) and answers IsKnownKey / IsLiveKey;
//   - live_options.cc compares, copies and describes keys for live changes.
// Adding a key is one entry in AllKeys() (keys.cc) plus its paragraph in conf/ccfs.toml and its
// row in docs/OPERATING.md's key table; tests/config/key_table_test.cc fails until all three agree.
//
// Not a contract for other rooms: include ccfs/config.h or config/live_options.h instead.
// Everything here is immutable after first use and safe from any thread.
#ifndef CCFS_CONFIG_KEYS_H_
#define CCFS_CONFIG_KEYS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ccfs/options.h"

namespace ccfs::config {

// The Options field a key lives in. The alternative is the key's type: unsigned integers are
// sizes (bytes, with units in text), int an integer, double a number, bool a boolean, CodecKind a
// codec name, std::string text taken as written (its rule says what it must look like; "" is
// allowed and means "off").
using Field = std::variant<uint64_t Options::*, uint32_t Options::*, int Options::*,
                           double Options::*, bool Options::*, CodecKind Options::*,
                           std::string Options::*>;

enum class KeyType { kSize, kInt, kDouble, kBool, kCodec, kString };

// What values a key accepts beyond its type. Messages for each kind are written in options.cc.
struct Rule {
  enum Kind {
    kAny,             // every value of the type
    kIntRange,        // lo..hi
    kPercent,         // lo..hi, finite (lo is 0)
    kAbovePercent,    // greater than lo, at most hi, finite
    kSeconds,         // finite, >= 0
    kPositiveSeconds, // finite, > 0
    kPowerOfTwo,      // a power of two in lo..hi
    kMemory,          // at least lo bytes, and the raw tier holds kMinRawPages pages of page_size
    kSizeRange,       // lo..hi bytes
    kCodec,           // a known CodecKind
    kCodecLevel,      // inside CodecLevelRange(compressor)
    kOneOf,           // one of `names` (a string key naming a mode: transport, raw_tier)
    kListenAddress,   // "" (off) or [HOST:]PORT (config/listen_address.h)
    kPinPaths,        // paths relative to DATASET, ':' between them, none with a ".." part
    kSftpTarget,      // "" (off), "auto" or a server and path (util/sftp_target.h)
  };
  Kind kind = kAny;
  double lo = 0;
  double hi = 0;
  std::span<const char* const> names;  // kOneOf: the accepted values, in the order documented
};

struct KeySpec {
  std::string_view name;   // identical in TOML, -o and .ccfs/control
  std::string_view table;  // the TOML table: cache, compression, eviction or daemon
  Field field;
  Rule rule;
  bool live;               // PageCache::Reconfigure applies it without a remount
  std::string_view doc;    // one line for RenderConfig: meaning and unit
  // Set when the key also accepts the word "auto": this flag then says the engine chooses the
  // value live, and the field holds the value in force (the flag is cleared by any other value).
  bool Options::* auto_flag = nullptr;
};

// The raw tier must hold at least this many pages (see options.cc).
inline constexpr uint64_t kMinRawPages = 16;

// Every key, in documentation order (conf/ccfs.toml, RenderConfig).
const std::vector<KeySpec>& AllKeys();
// The key named `name` exactly, or nullptr.
const KeySpec* FindKey(std::string_view name);
// The TOML tables, in documentation order.
const std::vector<std::string>& Tables();

KeyType TypeOf(const KeySpec& key);

// Copies `key`'s field from `from` into *to.
void CopyField(const KeySpec& key, const Options& from, Options* to);
// True when `key`'s field is equal in `a` and `b`.
bool SameField(const KeySpec& key, const Options& a, const Options& b);

enum class ValueStyle {
  kToml,     // as RenderConfig writes it: TOML that parses back to the same value ("256MiB" in
             // quotes, 2.0, true, "lz4")
  kDisplay,  // for people, as log lines show it (256MiB, 2, true, lz4); sizes are rounded
};
std::string FormatValue(const KeySpec& key, const Options& options, ValueStyle style);

// The codec names as a choice: "lz4 or zstd", or quoted: "\"lz4\" or \"zstd\"".
std::string CodecChoices(bool quoted);

// --- validation (options.cc) -------------------------------------------------------------------

// Checks `key`'s rule against the whole of `options` (some rules involve other keys). The message
// reads "key = value: rule".
Status CheckKey(const Options& options, const KeySpec& key);
// "key = shown: rule" for a value that cannot even be stored in the field (it is out of range by
// construction); `shown` is the value as the user wrote it.
Status OutOfRange(const Options& options, const KeySpec& key, const std::string& shown);
// The keys whose values `key`'s rule reads (itself included): the loader blames the line of one
// of them when the rule fails.
std::vector<std::string_view> RuleReads(const KeySpec& key);

}  // namespace ccfs::config

#endif  // CCFS_CONFIG_KEYS_H_
