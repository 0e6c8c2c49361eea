// The kernel's switch for FUSE over io_uring (/sys/module/fuse/parameters/enable_uring), as tests
// need it.
//
// EnsureUringEnabled() turns the switch on when it is off (root only) and remembers that it did;
// when the test program ends, a switch this program turned on is turned back off. It never turns
// the switch off earlier: a mount made meanwhile (by this program or another) may be about to
// register its rings, and the kernel refuses rings to new connections once the switch is off.
// UringSwitchState() reads it without changing it.
//
// Thread-safety: call from the test thread.
#ifndef CCFS_TESTS_TESTING_URING_SWITCH_H_
#define CCFS_TESTS_TESTING_URING_SWITCH_H_

#include <string>

namespace ccfs::testing {

enum class UringSwitch { kMissing, kOff, kOn };

UringSwitch UringSwitchState();

// True if the switch is on (now). Otherwise false and *why_not says why (not root, old kernel).
bool EnsureUringEnabled(std::string* why_not);

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_TESTING_URING_SWITCH_H_
