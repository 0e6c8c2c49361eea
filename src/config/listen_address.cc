// "[HOST:]PORT" parsing. inet_pton decides what a numeric address is, so every spelling the C
// library accepts for AF_INET / AF_INET6 is accepted and nothing else (no octal "0177.1" forms,
// which inet_pton refuses too).
#include "config/listen_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <string>
#include <utility>

#include "util/strings.h"

namespace ccfs {

namespace {

Status Refused() { return Status::InvalidArgument(std::string("must be ") + kListenAddressForm); }

bool ParsePort(std::string_view text, int* port) {
  if (text.empty() || text.size() > 5) return false;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  if (value < 1 || value > 65535) return false;
  *port = value;
  return true;
}

bool IsAddress(int family, const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(family, host.c_str(), buf) == 1;
}

}  // namespace

std::string ListenAddress::ToString() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Status ParseListenAddress(std::string_view raw, ListenAddress* out) {
  const std::string_view text = Trim(raw);
  ListenAddress a;
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    a.host = "127.0.0.1";
  } else {
    std::string host(text.substr(0, colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      a.host = host.substr(1, host.size() - 2);
      if (!IsAddress(AF_INET6, a.host)) return Refused();
    } else if (Lower(host) == "localhost") {
      a.host = "127.0.0.1";
    } else if (IsAddress(AF_INET, host)) {
      a.host = host;
    } else {
      return Refused();
    }
  }
  if (!ParsePort(colon == std::string_view::npos ? text : text.substr(colon + 1), &a.port)) {
    return Refused();
  }
  *out = std::move(a);
  return Status::Ok();
}

}  // namespace ccfs
