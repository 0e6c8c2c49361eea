// ccfs: one binary, one subcommand per file in src/cli/ (see command.h).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli/command.h"
#include "config/keys.h"

namespace ccfs {

std::vector<CommandEntry>& CommandRegistry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

}  // namespace ccfs

// mount.fuse3 appends "dev" and then "suid" to the options it hands on unless they hold "nodev"
// or "nosuid" (mount(8)'s defaults, not the fstab line's words). Without them a mount is
// nosuid,nodev (libfuse's default, and what `ccfs mount` gives), so the two appended words are
// dropped and both forms mount alike; the same words written in the fstab line arrive twice and
// are kept once.
static void DropMountHelperDefaults(std::string* list) {
  std::vector<std::string> words;
  for (size_t start = 0; start <= list->size();) {
    size_t comma = list->find(',', start);
    if (comma == std::string::npos) comma = list->size();
    words.push_back(list->substr(start, comma - start));
    start = comma + 1;
  }
  auto has = [&](const char* w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  const size_t given = words.size();
  if (!has("nosuid") && words.back() == "suid") words.pop_back();
  if (!has("nodev") && !words.empty() && words.back() == "dev") words.pop_back();
  if (words.size() == given) return;
  list->clear();
  for (size_t i = 0; i < words.size(); ++i) *list += (i == 0 ? "" : ",") + words[i];
}

static bool IsCommand(const std::string& word) {
  for (const auto& c : ccfs::CommandRegistry()) {
    if (c.name == word) return true;
  }
  return false;
}

// mount.fuse3 runs "ccfs DATASET MOUNTPOINT -o opts" (type fuse.ccfs); turn it into
// "ccfs mount DATASET MOUNTPOINT -o opts". DATASET is a path: a word with no '/' that names
// nothing here is a mistyped subcommand, not a dataset.
static std::vector<std::string> RewriteMountHelperForm(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (argc >= 3 && argv[1][0] != '-' && !IsCommand(argv[1]) &&
      (std::strchr(argv[1], '/') != nullptr || access(argv[1], F_OK) == 0)) {
    args.insert(args.begin() + 1, "mount");
    auto o = std::find(args.rbegin(), args.rend(), "-o");
    if (o != args.rend() && o != args.rbegin()) DropMountHelperDefaults(&*(o - 1));
  }
  return args;
}

// A usage error as Linux tools report one: a line naming the offending word, a hint, exit 2.
static int UsageError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", command.c_str(),
               message.c_str(), command.c_str());
  return 2;
}

// The words CLI11 lists after "...: " in an ExtrasError ("The following arguments were not
// expected: b a"), in the order given (CLI11 lists them last first).
static std::vector<std::string> ExtraWords(const std::string& what) {
  std::vector<std::string> words;
  size_t colon = what.find(": ");
  if (colon == std::string::npos) return words;
  for (size_t start = colon + 2; start < what.size();) {
    size_t space = what.find(' ', start);
    if (space == std::string::npos) space = what.size();
    if (space > start) words.insert(words.begin(), what.substr(start, space - start));
    start = space + 1;
  }
  return words;
}

// "0.010000" -> "0.01".
static std::string TrimZeros(std::string number) {
  if (number.find('.') == std::string::npos) return number;
  while (number.back() == '0') number.pop_back();
  if (number.back() == '.') number.pop_back();
  return number;
}

// "--memory" or "--memory=1GiB" given to `sub`, which takes keys as -o: the -o form of that key
// ("-o memory=1GiB"), else "".
static std::string KeyAsOption(const CLI::App* sub, const std::string& word) {
  if (sub == nullptr || word.rfind("--", 0) != 0 || sub->get_option_no_throw("-o") == nullptr) {
    return "";
  }
  std::string name = word.substr(2, word.find('=') - 2);
  std::replace(name.begin(), name.end(), '-', '_');
  if (ccfs::config::FindKey(name) == nullptr) return "";
  const size_t eq = word.find('=');
  return "-o " + name + "=" + (eq == std::string::npos ? "VALUE" : word.substr(eq + 1));
}

// CLI11's message for a parse error, reworded to name the word first. `sub`: the subcommand
// being parsed, if any.
static std::string UsageMessage(const CLI::ParseError& e, const CLI::App* sub) {
  const std::string what = e.what();
  std::smatch m;
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::vector<std::string> words = ExtraWords(what);
    if (!words.empty() && words[0][0] == '-') {
      const std::string key = KeyAsOption(sub, words[0]);
      return "unknown option '" + words[0] + "'" + (key.empty() ? "" : "; a key goes as " + key);
    }
    if (!words.empty()) return "unexpected argument '" + words[0] + "'";
  }
  // "Could not convert: --count = abc"
  static const std::regex kConversion("Could not convert: (\\S+) = (.*)");
  if (std::regex_match(what, m, kConversion)) {
    return "bad value '" + m.str(2) + "' for " + m.str(1);
  }
  // "--interval: Value 0 not in range 0.010000 to 86400.000000"
  static const std::regex kRange("(\\S+): Value (.*) not in range (\\S+) to (\\S+)");
  if (std::regex_match(what, m, kRange)) {
    const std::string low = TrimZeros(m.str(3)), high = TrimZeros(m.str(4));
    // CLI::NonNegativeNumber's upper end is the largest double, printed in full.
    return "bad value '" + m.str(2) + "' for " + m.str(1) + ": must be " +
           (high.size() > 20 ? low + " or more" : low + " to " + high);
  }
  // "--interval: 1 required FLOAT:FLOAT in [0.01 - 86400] missing"
  static const std::regex kMissingValue("(\\S+): \\d+ required .* missing");
  if (std::regex_match(what, m, kMissingValue)) return m.str(1) + " needs a value";
  std::string message = what;
  if (!message.empty()) message[0] = static_cast<char>(std::tolower(message[0]));
  return message;
}

int main(int argc, char** argv) {
  CLI::App app{"ccfs: " + std::string(ccfs::kProgramSummary)};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ccfs ") + ccfs::kVersion);
  std::map<CLI::App*, std::function<int()>> runners;
  for (auto& entry : ccfs::CommandRegistry()) {
    CLI::App* sub = app.add_subcommand(entry.name, entry.description);
    runners[sub] = entry.setup(sub);
  }
  std::vector<std::string> args = RewriteMountHelperForm(argc, argv);
  if (args.size() < 2) return UsageError("ccfs", "missing subcommand");
  // Before CLI11, which would only say that a subcommand is required.
  if (args[1][0] != '-' && !IsCommand(args[1])) {
    return UsageError("ccfs", "unknown subcommand '" + args[1] + "'");
  }
  if (args[1][0] == '-' && args[1] != "-h" && args[1] != "--help" && args[1] != "--version") {
    return UsageError("ccfs", "unknown option '" + args[1] + "'");
  }
  std::vector<const char*> cargs;
  for (const auto& a : args) cargs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(e);  // --help, --version
    }
    std::string command = "ccfs";
    const CLI::App* sub = nullptr;
    for (const CLI::App* parsed : app.get_subcommands()) {
      command += " " + parsed->get_name();
      sub = parsed;
    }
    return UsageError(command, UsageMessage(e, sub));
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) return run();
  }
  return 2;
}
