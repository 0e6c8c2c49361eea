#include "fuse/live_options.h"

#include <fmt/format.h>

#include <functional>

#include "ccfs/config.h"

namespace ccfs {

namespace {

// One row per Options field: its key, how to print it, how to copy it. Options has no reflection,
// so this table is the one place that must grow with it (a new field that is missing here is
// never reported as changed, and a live one is never applied).
struct Field {
  const char* key;
  std::function<std::string(const Options&)> print;
  std::function<void(const Options& from, Options* to)> copy;
};

#define CCFS_FIELD(name, printer) \
  Field{#name, [](const Options& o) { return printer(o.name); }, \
        [](const Options& from, Options* to) { to->name = from.name; }}

std::string PrintNumber(double v) { return fmt::format("{}", v); }
std::string PrintInt(long long v) { return fmt::format("{}", v); }
std::string PrintBool(bool v) { return v ? "true" : "false"; }
std::string PrintCodec(CodecKind k) { return CodecName(k); }

const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = {
      CCFS_FIELD(memory, FormatSize),
      CCFS_FIELD(compressed_percent, PrintInt),
      CCFS_FIELD(page_size, FormatSize),
      CCFS_FIELD(compressor, PrintCodec),
      CCFS_FIELD(compression_level, PrintInt),
      CCFS_FIELD(compress_threads, PrintInt),
      CCFS_FIELD(min_savings_percent, PrintNumber),
      CCFS_FIELD(admission_filter, PrintBool),
      CCFS_FIELD(evict_batch_percent, PrintNumber),
      CCFS_FIELD(low_watermark_percent, PrintNumber),
      CCFS_FIELD(probation, PrintBool),
      CCFS_FIELD(request_threads, PrintInt),
      CCFS_FIELD(pin_threads, PrintBool),
      CCFS_FIELD(allow_other, PrintBool),
      CCFS_FIELD(attr_timeout, PrintNumber),
  };
  return fields;
}

#undef CCFS_FIELD

}  // namespace

std::vector<std::string> ChangedKeys(const Options& a, const Options& b) {
  std::vector<std::string> keys;
  for (const Field& f : Fields()) {
    if (f.print(a) != f.print(b)) keys.push_back(f.key);
  }
  return keys;
}

Options WithLiveKeys(const Options& current, const Options& wanted) {
  Options out = current;
  for (const Field& f : Fields()) {
    if (IsLiveKey(f.key)) f.copy(wanted, &out);
  }
  return out;
}

std::string DescribeKey(const Options& options, const std::string& key) {
  for (const Field& f : Fields()) {
    if (key == f.key) return fmt::format("{} = {}", key, f.print(options));
  }
  return key;
}

}  // namespace ccfs
