// What the CLI tests read of `ccfs --help` and `ccfs SUB --help`: the listed subcommands, and the
// line that describes one option or argument. Both read an entry as CLI11 prints it, a line
// indented by two spaces that starts with the entry's name.
#ifndef CCFS_TESTS_CLI_HELP_TEXT_H_
#define CCFS_TESTS_CLI_HELP_TEXT_H_

#include <sstream>
#include <string>
#include <vector>

#include "testing/command.h"

namespace ccfs::testing {

// The subcommands `ccfs --help` lists under "Subcommands:".
inline std::vector<std::string> ListedSubcommands() {
  CommandResult help = RunCcfs({"--help"});
  std::vector<std::string> names;
  std::stringstream in(help.out);
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
    } else if (in_list && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return names;
}

// The line of `ccfs SUB --help` that describes `name`.
inline std::string HelpLine(const std::string& sub, const std::string& name) {
  CommandResult r = RunCcfs({sub, "--help"});
  for (const std::string& line : Lines(r.out)) {
    if (line.rfind("  " + name + " ", 0) == 0) return line;
  }
  return "no line for " + name + " in:\n" + r.out;
}

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_CLI_HELP_TEXT_H_
