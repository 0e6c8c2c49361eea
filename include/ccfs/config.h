// Config: turns a TOML file, `-o key=value` lists and .ccfs/control lines into Options.
//
// Every key of Options has the same name everywhere; the keys, their tables, types, ranges and
// which are live are listed once, in the key table (src/config/keys.cc), which drives every
// function here. Sizes accept units: a plain integer is bytes; suffixes K/KiB/M/MiB/G/GiB/T/TiB
// are powers of 1024, KB/MB/GB/TB powers of 1000. Booleans accept true/false/yes/no/on/off/1/0.
//
// Errors name the source, the line (for files) and the key, with the value and the reason, e.g.
//   conf/ccfs.toml:7: compressed_percent = 120: must be between 0 and 95
// and leave *options unchanged. Every entry point validates the whole result (Options::Validate)
// before assigning it, so options that come out of here need no second check.
//
// Pure functions over their arguments; thread-safe.
#ifndef CCFS_CONFIG_H_
#define CCFS_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/status.h"

namespace ccfs {

// File layout: every key lives in exactly one of the tables [cache], [compression], [eviction] and
// [daemon]; conf/ccfs.toml shows which (it sets every key, in table order, to its default; the
// key table is where that is decided, and a test keeps the two in step). A key at top level or in another table is an error naming the right table. Keys the file does
// not mention keep their value in *options. An empty file changes nothing.

// Reads the TOML file at `path` over *options. A missing or unreadable file, a syntax error, an
// unknown key, a duplicate key, a wrong type or an out-of-range value is an error naming the line.
Status LoadConfigFile(const std::string& path, Options* options);

// Same, for TOML text already in memory; `source` names it in messages.
Status ParseConfigText(std::string_view text, const std::string& source, Options* options);

// Applies one key=value (value as text, as in -o and .ccfs/control), then validates the whole of
// *options. `source` prefixes errors ("" = no prefix).
Status ApplyKeyValue(const std::string& key, const std::string& value, const std::string& source,
                     Options* options);

// Applies a comma-separated "k=v,k=v" list (the -o form). Items that are standard mount or FUSE
// options (rw, ro, nosuid, nodev, noatime, default_permissions, allow_other, fsname=..., ...)
// rather than ccfs keys are appended to *passthrough instead, when passthrough is non-null;
// with passthrough == nullptr they are errors. A bare `allow_other` is passed through and also
// sets Options::allow_other. The list is validated as a whole after every item is applied, so
// "compression_level=19,compressor=zstd" works in either order; on error nothing is applied and
// nothing is appended.
Status ApplyOptionList(const std::string& list, const std::string& source, Options* options,
                       std::vector<std::string>* passthrough);

// The engine's settings as every command that takes them reads them: the TOML file `config_file`
// (none when empty), then each -o list of `option_lists` in order (ApplyOptionList, with
// `passthrough` as there), over *options. On error *options is unchanged.
Status LoadConfigAndOptionLists(const std::string& config_file,
                                const std::vector<std::string>& option_lists, Options* options,
                                std::vector<std::string>* passthrough = nullptr);

// Applies the text written to a running mount's control file: `key=value` lines, blank lines and
// `#` comments. Only live keys (IsLiveKey) are accepted; every line is checked before any is
// applied, then the whole is validated. `file` names the control file in messages, which read
//   FILE:LINE: "text": expected key=value
//   FILE:LINE: unknown key "k"
//   FILE:LINE: k cannot change while mounted: needs a remount
//   FILE:LINE: k = v: reason          (a bad value; see ApplyKeyValue)
//   FILE: k = v: reason               (a rule between keys broken by the lines as a whole)
Status ApplyControlText(std::string_view text, const std::string& file, Options* options);

// True for keys PageCache::Reconfigure changes without a remount (the "live" keys of
// conf/ccfs.toml).
bool IsLiveKey(const std::string& key);
// True for any ccfs key.
bool IsKnownKey(const std::string& key);

// Parses a size with optional unit ("512MiB", "8K", "1073741824").
Status ParseSize(const std::string& text, uint64_t* bytes);
// Formats bytes with a binary unit ("512MiB", "8KiB", "1.5GiB"): for people, it rounds to two
// decimals; RenderConfig writes exact sizes.
std::string FormatSize(uint64_t bytes);

// Renders options as TOML that LoadConfigFile accepts back (every key, with comments).
std::string RenderConfig(const Options& options);

}  // namespace ccfs

#endif  // CCFS_CONFIG_H_
