#include "testing/uring_switch.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace ccfs::testing {

namespace {

constexpr const char* kSwitch = "/sys/module/fuse/parameters/enable_uring";

bool Write(const char* value) {
  std::ofstream f(kSwitch);
  f << value;
  f.flush();
  return static_cast<bool>(f);
}

// Runs when the test program exits: only a switch this program turned on is turned off.
void RestoreSwitch() { Write("N"); }

}  // namespace

UringSwitch UringSwitchState() {
  std::ifstream f(kSwitch);
  if (!f) return UringSwitch::kMissing;
  std::string v;
  std::getline(f, v);
  return v == "Y" || v == "1" ? UringSwitch::kOn : UringSwitch::kOff;
}

bool EnsureUringEnabled(std::string* why_not) {
  switch (UringSwitchState()) {
    case UringSwitch::kOn:
      return true;
    case UringSwitch::kMissing:
      *why_not = std::string("this kernel has no FUSE over io_uring (") + kSwitch + " is missing)";
      return false;
    case UringSwitch::kOff:
      break;
  }
  if (geteuid() != 0) {
    *why_not = std::string("FUSE over io_uring is off and only root may turn it on (") + kSwitch + ")";
    return false;
  }
  if (!Write("Y") || UringSwitchState() != UringSwitch::kOn) {
    *why_not = std::string("could not turn on ") + kSwitch;
    return false;
  }
  static bool registered = false;
  if (!registered) {
    registered = true;
    atexit(RestoreSwitch);
  }
  return true;
}

}  // namespace ccfs::testing
