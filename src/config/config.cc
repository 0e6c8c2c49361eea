// Config: TOML files, -o lists and control lines into Options, all driven by the key table
// (config/keys.h): this file knows value syntax (TOML types, sizes with units, booleans as words),
// never a particular key.
//
// Every entry point works on a copy of the caller's Options and assigns it back only after every
// value has been converted and the whole struct validated, so an error never leaves a half-applied
// configuration behind (the daemon may be running on the old one).
//
// The file layout is fixed (see conf/ccfs.toml): each key lives in exactly one of the tables
// [cache], [compression], [eviction], [daemon] (the key table says which). Accepting a key anywhere would let two spellings of
// the same file disagree silently, so a key in the wrong place is an error that names the right
// table.
//
// toml++ keeps tables in sorted maps, so the loader gathers every key with its line first and
// works through them in file order: the first error reported is the first one a reader would meet.
#include "ccfs/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "config/keys.h"
#include "util/strings.h"

namespace ccfs {

namespace {

using config::AllKeys;
using config::FindKey;
using config::KeySpec;

// A config file is a few hundred bytes; anything this large is not one (and reading it whole
// would be a way to exhaust memory).
constexpr size_t kMaxConfigFileBytes = 1 << 20;

// Standard mount options the -o list hands on to FUSE / mount rather than to ccfs.
const char* const kFlagMountOptions[] = {
    "rw",      "ro",         "suid",       "nosuid",      "dev",           "nodev",
    "exec",    "noexec",     "atime",      "noatime",     "relatime",      "norelatime",
    "strictatime", "nostrictatime", "diratime", "nodiratime", "lazytime", "nolazytime",
    "sync",    "async",      "dirsync",    "auto",        "noauto",        "user",
    "users",   "nofail",     "_netdev",    "default_permissions", "allow_other",
};
const char* const kValueMountOptions[] = {"fsname", "subtype"};

// The C++ type of the field a pointer-to-member names.
template <typename Member>
using FieldType = std::remove_cvref_t<decltype(Options{}.*Member{})>;

std::string WithSource(const std::string& source, const std::string& msg) {
  return source.empty() ? msg : source + ": " + msg;
}

std::string WithLine(const std::string& source, size_t line, const std::string& msg) {
  return fmt::format("{}:{}: {}", source, line, msg);
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'x'?)" for the closest candidate, or "" when nothing is close.
std::string Suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(Lower(std::string(name)), c);
    if (d < best_distance) best = &c, best_distance = d;
  }
  size_t limit = std::max<size_t>(2, name.size() / 3);
  if (best == nullptr || best_distance > limit) return "";
  return " (did you mean '" + *best + "'?)";
}

std::vector<std::string> KeyNames() {
  std::vector<std::string> names;
  for (const KeySpec& key : AllKeys()) names.emplace_back(key.name);
  return names;
}

std::string UnknownKeyMessage(const std::string& key) {
  return "unknown key '" + key + "'" + Suggestion(key, KeyNames());
}

bool IsFlagMountOption(std::string_view name) {
  return std::find(std::begin(kFlagMountOptions), std::end(kFlagMountOptions), name) !=
         std::end(kFlagMountOptions);
}

bool IsValueMountOption(std::string_view name) {
  return std::find(std::begin(kValueMountOptions), std::end(kValueMountOptions), name) !=
         std::end(kValueMountOptions);
}

// Sizes are judged as a whole number of bytes before narrowing to the field (page_size is
// uint32_t), so a huge value is reported as itself rather than as its truncation.
template <typename T>
Status StoreSize(const KeySpec& key, T Options::*member, uint64_t bytes, const std::string& shown,
                 Options* o) {
  if (bytes > std::numeric_limits<T>::max()) return config::OutOfRange(*o, key, shown);
  o->*member = static_cast<T>(bytes);
  return Status::Ok();
}

Status StoreInt(const KeySpec& key, int Options::*member, long long value, Options* o) {
  if (value < INT_MIN || value > INT_MAX) return config::OutOfRange(*o, key, std::to_string(value));
  o->*member = static_cast<int>(value);
  return Status::Ok();
}

Status StoreCodec(const KeySpec& key, CodecKind Options::*member, const std::string& text, Options* o) {
  if (!ParseCodecKind(text, &(o->*member))) {
    return Status::InvalidArgument(
        fmt::format("{} = \"{}\": must be {}", key.name, Printable(text), config::CodecChoices(true)));
  }
  return Status::Ok();
}

// Applies a value given as text (-o, control lines). Messages read "key = value: problem".
Status SetFromTextValue(const KeySpec& key, const std::string& raw, Options* o);

// The word "auto" for a key that takes it sets its flag and keeps the value in force; any other
// value clears the flag.
Status SetFromText(const KeySpec& key, const std::string& raw, Options* o) {
  if (key.auto_flag != nullptr && Lower(std::string(Trim(raw))) == "auto") {
    o->*key.auto_flag = true;
    return Status::Ok();
  }
  Status s = SetFromTextValue(key, raw, o);
  if (s.ok() && key.auto_flag != nullptr) o->*key.auto_flag = false;
  return s;
}

Status SetFromTextValue(const KeySpec& key, const std::string& raw, Options* o) {
  const std::string text(Trim(raw));
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument(fmt::format("{} = {}: {}", key.name, Printable(raw), what));
  };
  // Text keys take the value as written, empty included ("" = off); their rule judges it.
  if (text.empty() && config::TypeOf(key) != config::KeyType::kString) return bad("empty value");
  return std::visit(
      [&](auto member) -> Status {
        using T = FieldType<decltype(member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          o->*member = text;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, bool>) {
          std::string v = Lower(text);
          if (v == "true" || v == "yes" || v == "on" || v == "1") {
            o->*member = true;
          } else if (v == "false" || v == "no" || v == "off" || v == "0") {
            o->*member = false;
          } else {
            return bad("expected true/false, yes/no, on/off or 1/0");
          }
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, CodecKind>) {
          return StoreCodec(key, member, text, o);
        } else if constexpr (std::is_same_v<T, double>) {
          double value = 0;
          auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
          if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
            return bad("expected a finite number");
          }
          o->*member = value;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, int>) {
          long long value = 0;
          auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
          if (ec == std::errc::result_out_of_range) {
            return StoreInt(key, member, text[0] == '-' ? LLONG_MIN : LLONG_MAX, o);
          }
          if (ec != std::errc() || end != text.data() + text.size()) return bad("expected an integer");
          return StoreInt(key, member, value, o);
        } else {
          uint64_t bytes = 0;
          Status s = ParseSize(text, &bytes);
          if (!s.ok()) return bad(s.message());
          return StoreSize(key, member, bytes, text, o);
        }
      },
      key.field);
}

const char* TomlTypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

// Applies a TOML value. Messages read "key = value: problem" or "key: expected X, got Y".
Status SetFromTomlValue(const KeySpec& key, const toml::node& node, Options* o);

Status SetFromToml(const KeySpec& key, const toml::node& node, Options* o) {
  if (key.auto_flag != nullptr) {
    if (const auto* s = node.as_string(); s != nullptr && Lower(std::string(Trim(s->get()))) == "auto") {
      o->*key.auto_flag = true;
      return Status::Ok();
    }
  }
  Status s = SetFromTomlValue(key, node, o);
  if (s.ok() && key.auto_flag != nullptr) o->*key.auto_flag = false;
  return s;
}

Status SetFromTomlValue(const KeySpec& key, const toml::node& node, Options* o) {
  auto wrong_type = [&](const std::string& expected) {
    return Status::InvalidArgument(
        fmt::format("{}: expected {}, got {}", key.name, expected, TomlTypeName(node)));
  };
  return std::visit(
      [&](auto member) -> Status {
        using T = FieldType<decltype(member)>;
        if constexpr (std::is_same_v<T, bool>) {
          if (const auto* b = node.as_boolean()) {
            o->*member = b->get();
            return Status::Ok();
          }
          return wrong_type("a boolean (true or false)");
        } else if constexpr (std::is_same_v<T, CodecKind>) {
          if (const auto* s = node.as_string()) return StoreCodec(key, member, s->get(), o);
          return wrong_type("a string (" + config::CodecChoices(true) + ")");
        } else if constexpr (std::is_same_v<T, double>) {
          if (const auto* f = node.as_floating_point()) {
            o->*member = f->get();
            return Status::Ok();
          }
          if (const auto* i = node.as_integer()) {
            o->*member = static_cast<double>(i->get());
            return Status::Ok();
          }
          return wrong_type("a number");
        } else if constexpr (std::is_same_v<T, int>) {
          if (const auto* i = node.as_integer()) return StoreInt(key, member, i->get(), o);
          return wrong_type("an integer");
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (const auto* s = node.as_string()) {
            o->*member = std::string(Trim(s->get()));
            return Status::Ok();
          }
          return wrong_type("a string");
        } else {
          if (const auto* i = node.as_integer()) {
            int64_t v = i->get();
            if (v < 0) return Status::InvalidArgument(fmt::format("{} = {}: must not be negative", key.name, v));
            return StoreSize(key, member, static_cast<uint64_t>(v), std::to_string(v), o);
          }
          if (const auto* s = node.as_string()) {
            uint64_t bytes = 0;
            Status st = ParseSize(s->get(), &bytes);
            if (!st.ok()) {
              return Status::InvalidArgument(fmt::format("{} = \"{}\": {}", key.name, s->get(), st.message()));
            }
            return StoreSize(key, member, bytes, "\"" + s->get() + "\"", o);
          }
          return wrong_type("a size (integer bytes or a string such as \"256MiB\")");
        }
      },
      key.field);
}

// One key=value found in the file, with where it was.
struct FileEntry {
  size_t line;
  std::string table;  // "" at top level
  std::string key;
  const toml::node* node;
};

// "[cache], [compression], [eviction], [daemon]"
std::string TableList() {
  std::string out;
  for (const std::string& table : config::Tables()) out += (out.empty() ? "[" : ", [") + table + "]";
  return out;
}

Status UnknownTopLevel(const std::string& key) {
  if (const KeySpec* spec = FindKey(key)) {
    return Status::InvalidArgument(
        fmt::format("{}: belongs in table [{}] (see conf/ccfs.toml for the layout)", key, spec->table));
  }
  return Status::InvalidArgument("unknown table '" + key + "'" + Suggestion(key, config::Tables()) +
                                 "; the tables are " + TableList());
}

Status UnknownInTable(const std::string& table, const std::string& key) {
  if (const KeySpec* spec = FindKey(key)) {
    return Status::InvalidArgument(fmt::format("{}: belongs in table [{}], not [{}]", key, spec->table, table));
  }
  return Status::InvalidArgument(fmt::format("unknown key '{}' in [{}]{}", key, table, Suggestion(key, KeyNames())));
}

// The 1-based line of the first NUL byte, or 0.
size_t LineOfNul(std::string_view text) {
  size_t pos = text.find('\0');
  if (pos == std::string_view::npos) return 0;
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + pos, '\n'));
}

}  // namespace

bool IsLiveKey(const std::string& key) {
  const KeySpec* spec = FindKey(key);
  return spec != nullptr && spec->live;
}

bool IsKnownKey(const std::string& key) { return FindKey(key) != nullptr; }

Status ParseConfigText(std::string_view text, const std::string& source, Options* options) {
  if (size_t line = LineOfNul(text)) {
    return Status::InvalidArgument(WithLine(source, line, "binary data (a NUL byte), not a TOML config file"));
  }
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(WithLine(source, e.source().begin.line, std::string(e.description())));
  }

  std::vector<FileEntry> entries;
  std::vector<std::pair<size_t, Status>> errors;  // structural errors, by line
  for (auto&& [name, node] : root) {
    const std::string key(name.str());
    size_t line = name.source().begin.line;
    const std::vector<std::string>& tables = config::Tables();
    bool is_table_name = std::find(tables.begin(), tables.end(), key) != tables.end();
    if (!is_table_name) {
      errors.emplace_back(line, UnknownTopLevel(key));
      continue;
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      errors.emplace_back(line, Status::InvalidArgument(fmt::format(
                                    "{}: expected a table ([{}]), got {}", key, key, TomlTypeName(node))));
      continue;
    }
    for (auto&& [sub_name, sub_node] : *table) {
      entries.push_back({sub_name.source().begin.line, key, std::string(sub_name.str()), &sub_node});
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const FileEntry& a, const FileEntry& b) { return a.line < b.line; });

  Options copy = *options;
  for (const FileEntry& e : entries) {
    const KeySpec* spec = FindKey(e.key);
    Status s = (spec == nullptr || spec->table != e.table) ? UnknownInTable(e.table, e.key)
                                                            : SetFromToml(*spec, *e.node, &copy);
    if (!s.ok()) errors.emplace_back(e.line, s);
  }
  if (!errors.empty()) {
    auto first = std::min_element(errors.begin(), errors.end(),
                                  [](const auto& a, const auto& b) { return a.first < b.first; });
    return Status::InvalidArgument(WithLine(source, first->first, first->second.message()));
  }

  // Values are well-typed; now the rules, blaming the line of the key the reader wrote.
  for (const FileEntry& e : entries) {
    Status s = config::CheckKey(copy, *FindKey(e.key));
    if (!s.ok()) return Status::InvalidArgument(WithLine(source, e.line, s.message()));
  }
  for (const KeySpec& key : AllKeys()) {
    Status s = config::CheckKey(copy, key);
    if (s.ok()) continue;
    // A key the file did not set fails because of one it did (e.g. page_size leaves no room in the
    // default memory): point at the last key in the file that the rule reads, if any.
    size_t line = 0;
    for (std::string_view read : config::RuleReads(key)) {
      for (const FileEntry& e : entries) {
        if (e.key == read) line = std::max(line, e.line);
      }
    }
    return Status::InvalidArgument(line ? WithLine(source, line, s.message()) : WithSource(source, s.message()));
  }
  *options = copy;
  return Status::Ok();
}

Status LoadConfigFile(const std::string& path, Options* options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, path + ": cannot open config file");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::FromErrno(err, path + ": cannot stat config file");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": is a directory, not a config file");
  }
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Status::FromErrno(err, path + ": cannot read config file");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxConfigFileBytes) {
      ::close(fd);
      return Status::InvalidArgument(
          fmt::format("{}: larger than {} bytes; not a ccfs config file", path, kMaxConfigFileBytes));
    }
  }
  ::close(fd);
  return ParseConfigText(text, path, options);
}

Status ApplyKeyValue(const std::string& key, const std::string& value, const std::string& source,
                     Options* options) {
  const std::string name(Trim(key));
  const KeySpec* spec = FindKey(name);
  if (spec == nullptr) return Status::InvalidArgument(WithSource(source, UnknownKeyMessage(name)));
  Options copy = *options;
  Status s = SetFromText(*spec, value, &copy);
  if (s.ok()) s = copy.Validate();
  if (!s.ok()) return Status::InvalidArgument(WithSource(source, s.message()));
  *options = copy;
  return Status::Ok();
}

Status ApplyOptionList(const std::string& list, const std::string& source, Options* options,
                       std::vector<std::string>* passthrough) {
  Options copy = *options;
  std::vector<std::string> handed_on;
  auto fail = [&](const std::string& msg) { return Status::InvalidArgument(WithSource(source, msg)); };
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string item(Trim(std::string_view(list).substr(start, comma - start)));
    start = comma + 1;
    if (item.empty()) continue;

    size_t eq = item.find('=');
    const std::string name(Trim(std::string_view(item).substr(0, eq)));
    const bool has_value = eq != std::string::npos;
    if (const KeySpec* spec = FindKey(name)) {
      if (!has_value) {
        // A bare allow_other is the FUSE mount option; it also means what the ccfs key says.
        if (name != "allow_other") return fail(fmt::format("{}: needs a value ({}=...)", name, name));
        copy.allow_other = true;
        handed_on.push_back(name);
        continue;
      }
      Status s = SetFromText(*spec, item.substr(eq + 1), &copy);
      if (!s.ok()) return fail(s.message());
      continue;
    }
    if (IsFlagMountOption(name) || IsValueMountOption(name)) {
      if (passthrough == nullptr) return fail("'" + item + "' is a mount option, not a ccfs key");
      if (IsFlagMountOption(name) && has_value) return fail("mount option '" + name + "' takes no value");
      if (IsValueMountOption(name) && (!has_value || Trim(std::string_view(item).substr(eq + 1)).empty())) {
        return fail(fmt::format("mount option '{}' needs a value ({}=...)", name, name));
      }
      handed_on.push_back(item);
      continue;
    }
    return fail(UnknownKeyMessage(name));
  }
  Status s = copy.Validate();
  if (!s.ok()) return fail(s.message());
  *options = copy;
  if (passthrough != nullptr) passthrough->insert(passthrough->end(), handed_on.begin(), handed_on.end());
  return Status::Ok();
}

Status LoadConfigAndOptionLists(const std::string& config_file,
                                const std::vector<std::string>& option_lists, Options* options,
                                std::vector<std::string>* passthrough) {
  Options o = *options;
  Status s;
  if (!config_file.empty() && !(s = LoadConfigFile(config_file, &o)).ok()) return s;
  for (const std::string& list : option_lists) {
    if (!(s = ApplyOptionList(list, "-o", &o, passthrough)).ok()) return s;
  }
  *options = o;
  return Status::Ok();
}

Status ApplyControlText(std::string_view text, const std::string& file, Options* options) {
  Options wanted = *options;
  size_t start = 0;
  int line_no = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(Trim(text.substr(start, end - start)));
    start = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::string source = fmt::format("{}:{}", file, line_no);
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidArgument(
          fmt::format("{}: \"{}\": expected key=value", source, Printable(line)));
    }
    const std::string key(Trim(std::string_view(line).substr(0, eq)));
    const std::string value(Trim(std::string_view(line).substr(eq + 1)));
    if (!IsKnownKey(key)) {
      return Status::InvalidArgument(fmt::format("{}: unknown key \"{}\"", source, Printable(key)));
    }
    if (!IsLiveKey(key)) {
      return Status::InvalidArgument(
          fmt::format("{}: {} cannot change while mounted: needs a remount", source, key));
    }
    Status s = ApplyKeyValue(key, value, source, &wanted);
    if (!s.ok()) return s;
  }
  Status s = wanted.Validate();
  if (!s.ok()) return Status::InvalidArgument(WithSource(file, s.message()));
  *options = wanted;
  return Status::Ok();
}

std::string RenderConfig(const Options& o) {
  std::string out =
      "# ccfs configuration. Every key is documented with its default in conf/ccfs.toml.\n";
  std::string_view table;
  for (const KeySpec& key : AllKeys()) {
    if (key.table != table) {
      table = key.table;
      out += fmt::format("\n[{}]\n", table);
    }
    out += fmt::format("# {}\n{} = {}\n", key.doc, key.name, config::FormatValue(key, o, config::ValueStyle::kToml));
  }
  return out;
}

}  // namespace ccfs
