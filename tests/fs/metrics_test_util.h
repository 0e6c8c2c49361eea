// Helpers for the tests of the metrics endpoint (tests/fs/metrics_test.cc and the bad-input
// tests): a TCP port held open on loopback, and a scrape with curl, the client Prometheus users
// try first.
#ifndef CCFS_TESTS_FS_METRICS_TEST_UTIL_H_
#define CCFS_TESTS_FS_METRICS_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "testing/command.h"

namespace ccfs::testing {

// A socket listening on 127.0.0.1 (port 0 = any free port) until destroyed or Close()d. It sets
// SO_REUSEPORT, so a server that also set it could share the port: a ccfs mount refused on a port
// held this way proves the daemon does not.
class ListeningSocket {
 public:
  explicit ListeningSocket(int port = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int yes = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof(yes));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(fd_, 4) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      Close();
      return;
    }
    port_ = ntohs(a.sin_port);
  }
  ~ListeningSocket() { Close(); }
  ListeningSocket(const ListeningSocket&) = delete;
  ListeningSocket& operator=(const ListeningSocket&) = delete;

  int port() const { return port_; }  // 0 if it could not listen
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A port free a moment ago, for a mount to listen on (another process could take it in between;
// on a test machine that is rare enough).
inline int FreePort() { return ListeningSocket().port(); }

// The value of the sample `series` (its name and labels, as scraped) in `text`, or -1 if absent.
inline double Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return -1;
}

inline bool HaveCurl() { return RunCommand({"curl", "--version"}, 10).exit_code == 0; }

// GET http://127.0.0.1:PORT/PATH with curl: the body in .out, curl's exit code (0 = a 2xx
// answer, as --fail makes it) in .exit_code.
inline CommandResult Curl(int port, const std::string& path = "/metrics",
                          const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {"curl",   "--silent",   "--show-error",
                                   "--fail", "--max-time", "10"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("http://127.0.0.1:" + std::to_string(port) + path);
  return RunCommand(argv, 20);
}

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_FS_METRICS_TEST_UTIL_H_
