#include "util/sftp_target.h"

#include <sstream>
#include <string_view>

#include "util/mount_table.h"

namespace ccfs {
namespace {

bool ParsePort(const std::string& text, int* port) {
  if (text.empty() || text.size() > 5 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *port = std::stoi(text);
  return *port >= 1 && *port <= 65535;
}

// [user@]host, the user optional; false when the host is empty.
bool SplitUserHost(const std::string& text, SftpTarget* t) {
  const size_t at = text.rfind('@');
  t->user = at == std::string::npos ? "" : text.substr(0, at);
  t->host = at == std::string::npos ? text : text.substr(at + 1);
  return !t->host.empty() && (at == std::string::npos || !t->user.empty());
}

}  // namespace

std::string SftpTarget::ToString() const {
  std::string s = "sftp://";
  if (!user.empty()) s += user + "@";
  s += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != 0) s += ":" + std::to_string(port);
  if (path.empty() || path[0] != '/') s += "/~/";
  return s + path;
}

Status ParseSftpTarget(const std::string& text, SftpTarget* target) {
  SftpTarget t;
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("sftp target '" + text + "': " + why +
                                   " (sftp://[USER@]HOST[:PORT]/PATH or [USER@]HOST:PATH)");
  };
  constexpr std::string_view kScheme = "sftp://";
  if (text.compare(0, kScheme.size(), kScheme) == 0) {
    const std::string rest = text.substr(kScheme.size());
    const size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    t.path = slash == std::string::npos ? "" : rest.substr(slash);
    // sftp://host/~/dir: the login directory's dir, as OpenSSH's sftp and curl spell it.
    if (t.path == "/~") t.path = "";
    if (t.path.compare(0, 3, "/~/") == 0) t.path = t.path.substr(3);
    const size_t at = authority.rfind('@');
    std::string hostport = at == std::string::npos ? authority : authority.substr(at + 1);
    std::string port;
    if (!hostport.empty() && hostport[0] == '[') {  // [v6 address]:port
      const size_t close = hostport.find(']');
      if (close == std::string::npos) return bad("no ']' after the address");
      if (close + 1 < hostport.size()) {
        if (hostport[close + 1] != ':') return bad("text after ']'");
        port = hostport.substr(close + 2);
        if (port.empty()) return bad("an empty port");
      }
      hostport = hostport.substr(1, close - 1);
    } else if (const size_t colon = hostport.rfind(':'); colon != std::string::npos) {
      port = hostport.substr(colon + 1);
      if (port.empty()) return bad("an empty port");
      hostport = hostport.substr(0, colon);
    }
    if (!port.empty() && !ParsePort(port, &t.port)) {
      return bad("port '" + port + "' is not 1..65535");
    }
    if (!SplitUserHost((at == std::string::npos ? "" : authority.substr(0, at + 1)) + hostport,
                       &t)) {
      return bad("no host");
    }
  } else {
    // sshfs's [user@]host:[path]. A host with ':' in it (an IPv6 address) is written [addr].
    size_t colon = std::string::npos;
    if (const size_t open = text.find('['); open != std::string::npos) {
      const size_t close = text.find(']', open);
      if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
        return bad("an address in [] must be followed by ':'");
      }
      colon = close + 1;
    } else {
      colon = text.find(':');
    }
    if (colon == std::string::npos) return bad("no ':' between the host and the path");
    std::string userhost = text.substr(0, colon);
    if (const size_t open = userhost.find('['); open != std::string::npos) {
      userhost = userhost.substr(0, open) + userhost.substr(open + 1, userhost.size() - open - 2);
    }
    if (!SplitUserHost(userhost, &t)) return bad("no host");
    t.path = text.substr(colon + 1);
  }
  if (t.host.find_first_of(" \t/") != std::string::npos) return bad("a host with '/' or a space");
  // The path as sshfs joins it: no trailing slash (the root stays "/").
  while (t.path.size() > 1 && t.path.back() == '/') t.path.pop_back();
  *target = t;
  return Status::Ok();
}

Status SftpTargetOfMount(const std::string& dataset, const std::string& mounts,
                         SftpTarget* target) {
  std::istringstream in(mounts);
  std::string line;
  MountEntry best;
  bool found = false;
  while (std::getline(in, line)) {
    MountEntry e;
    if (!ParseMountLine(line, &e)) continue;
    const bool holds = e.target == "/" || dataset == e.target ||
                       (dataset.compare(0, e.target.size(), e.target) == 0 &&
                        dataset.size() > e.target.size() && dataset[e.target.size()] == '/');
    // The longest mount point holding the dataset; of equal ones, the last listed (on top).
    if (holds && (!found || e.target.size() >= best.target.size())) {
      best = e;
      found = true;
    }
  }
  if (!found) return Status::NotFound("sftp = auto: no mount holds " + dataset);
  if (best.type != "fuse.sshfs") {
    return Status::InvalidArgument("sftp = auto: " + dataset + " is on a " + best.type +
                                   " mount at " + best.target +
                                   ", not an sshfs one; give the server as sftp = "
                                   "sftp://[USER@]HOST[:PORT]/PATH");
  }
  SftpTarget t;
  if (!ParseSftpTarget(best.source, &t).ok()) {
    return Status::InvalidArgument("sftp = auto: the sshfs mount at " + best.target +
                                   " names no server (its source is '" + best.source +
                                   "', set by sshfs -o fsname?); give it as sftp = "
                                   "sftp://[USER@]HOST[:PORT]/PATH or [USER@]HOST:PATH");
  }
  const std::string under = dataset.size() > best.target.size()
                                ? dataset.substr(best.target.size() + (best.target == "/" ? 0 : 1))
                                : "";
  if (!under.empty()) {
    t.path = t.path.empty() ? under : (t.path == "/" ? "/" + under : t.path + "/" + under);
  }
  *target = t;
  return Status::Ok();
}

}  // namespace ccfs
