// The Python helpers the commands plot with (scripts/plot_*.py): where to find one, and how to run
// it.
//
// Thread-safety: pure functions (RunPlotScript runs a child process and waits for it).
#ifndef CCFS_CLI_PLOT_SCRIPT_H_
#define CCFS_CLI_PLOT_SCRIPT_H_

#include <string>
#include <vector>

namespace ccfs {

// The script `name` (e.g. "plot_sweep.py"): `given` if not empty, else $`env_var` if set, else
// the first that exists of ../scripts/NAME and ../../scripts/NAME beside the binary (a build tree
// in or under the source tree) and ../share/ccfs/NAME (an installed tree). "" if none.
std::string FindPlotScript(const std::string& given, const char* env_var, const std::string& name);

// The exit status of a plot script that found no matplotlib (python3-matplotlib is a Recommends
// of the package, not a Depends): the command says so and its other outputs stand.
inline constexpr int kPlotNoMatplotlib = 3;

// Runs `python3 SCRIPT ARGS...` (no shell: each argument reaches the script as it is) and waits;
// returns its exit status (0 = plotted) and sets *command to the line run, for messages. Debian's
// /usr/bin/python3 is preferred: it is the one python3-matplotlib installs into, where a python3
// earlier on PATH (a virtualenv) often lacks it.
int RunPlotScript(const std::string& script, const std::vector<std::string>& args,
                  std::string* command);

}  // namespace ccfs

#endif  // CCFS_CLI_PLOT_SCRIPT_H_
