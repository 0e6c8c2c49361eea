// ccfs: one binary, one subcommand per file in src/cli/ (see command.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli/command.h"

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

// mount.fuse3 runs "ccfs DATASET MOUNTPOINT -o opts" (type fuse.ccfs); turn it into
// "ccfs mount DATASET MOUNTPOINT -o opts".
static std::vector<std::string> RewriteMountHelperForm(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (argc >= 3 && argv[1][0] != '-') {
    bool known = false;
    for (const auto& c : ccfs::CommandRegistry()) known |= (c.name == argv[1]);
    if (!known) {
      args.insert(args.begin() + 1, "mount");
      auto o = std::find(args.rbegin(), args.rend(), "-o");
      if (o != args.rend() && o != args.rbegin()) DropMountHelperDefaults(&*(o - 1));
    }
  }
  return args;
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
  std::vector<const char*> cargs;
  for (const auto& a : args) cargs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) return run();
  }
  return 2;
}
