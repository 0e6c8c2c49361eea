// The address a key asks the daemon to listen on (the `metrics` key): "[HOST:]PORT".
//
// HOST is an IPv4 address (127.0.0.1, 0.0.0.0 for every interface), an IPv6 address in brackets
// ([::1], [::] for every interface) or "localhost" (= 127.0.0.1); without HOST the address is
// 127.0.0.1, so a bare port never listens beyond the machine. PORT is 1..65535. Host names are
// not resolved: a key is judged when the mount starts, by its text alone, and an address that
// depends on DNS could mean another interface tomorrow.
//
// The key table's rule (Rule::kListenAddress) and the daemon that listens read the text with the
// same function, so what validation accepted is what is bound.
//
// Pure functions; thread-safe.
#ifndef CCFS_CONFIG_LISTEN_ADDRESS_H_
#define CCFS_CONFIG_LISTEN_ADDRESS_H_

#include <string>
#include <string_view>

#include "ccfs/status.h"

namespace ccfs {

// The accepted form in words, as messages and the man page show it.
inline constexpr char kListenAddressForm[] =
    "[HOST:]PORT, HOST an IPv4 address, an IPv6 address in brackets or localhost, PORT 1..65535 "
    "(e.g. 127.0.0.1:9567; a bare port means 127.0.0.1)";

struct ListenAddress {
  std::string host;  // a numeric address without brackets: "127.0.0.1", "::1"
  int port = 0;      // 1..65535

  // "127.0.0.1:9567" or "[::1]:9567": the form people read and curl accepts.
  std::string ToString() const;
};

// Parses "[HOST:]PORT" (surrounding whitespace ignored). On error returns InvalidArgument whose
// message is the rule ("must be " + kListenAddressForm), without the key (the caller names it),
// and leaves *out unchanged.
Status ParseListenAddress(std::string_view text, ListenAddress* out);

}  // namespace ccfs

#endif  // CCFS_CONFIG_LISTEN_ADDRESS_H_
