// sftp_read: the time of an 8 KiB random read of a file over SFTP through libssh, in this process,
// with no FUSE mount in between: what a native SFTP client of ccfs could cost per miss, beside the
// same read through an sshfs mount (results/miss-breakdown/breakdown.sh runs both on one sshd).
//
// Queue depth 1 (one read answered before the next is sent), offsets uniform over the file in
// whole blocks. Prints one JSON line: {"reads", "mean_us", "p50_us", "p99_us"}.
//
//   sftp_read --host 127.0.0.1 --port P --user U --key FILE --known-hosts FILE --path /abs/file
//             [--bs 8192] [--seconds 10]
#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

// Owns what libssh hands out; each pointer is freed in the reverse order of its making.
struct Session {
  ssh_session ssh = nullptr;
  ssh_key key = nullptr;
  sftp_session sftp = nullptr;
  sftp_file file = nullptr;
  ~Session() {
    if (file != nullptr) sftp_close(file);
    if (sftp != nullptr) sftp_free(sftp);
    if (key != nullptr) ssh_key_free(key);
    if (ssh != nullptr) {
      ssh_disconnect(ssh);
      ssh_free(ssh);
    }
  }
};

int Fail(const std::string& what, ssh_session ssh) {
  std::fprintf(stderr, "sftp_read: %s: %s\n", what.c_str(),
               ssh != nullptr ? ssh_get_error(ssh) : "out of memory");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"8 KiB random reads of a file over SFTP through libssh, queue depth 1"};
  std::string host = "127.0.0.1", user, key_path, known_hosts, path;
  int port = 22;
  size_t bs = 8192;
  double seconds = 10;
  app.add_option("--host", host);
  app.add_option("--port", port);
  app.add_option("--user", user)->required();
  app.add_option("--key", key_path, "private key file")->required();
  app.add_option("--known-hosts", known_hosts, "the server's key, as ssh writes it")->required();
  app.add_option("--path", path, "absolute path of the file on the server")->required();
  app.add_option("--bs", bs, "bytes per read")->check(CLI::Range(512, 1 << 20));
  app.add_option("--seconds", seconds)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  Session s;
  s.ssh = ssh_new();
  if (s.ssh == nullptr) return Fail("ssh_new", nullptr);
  ssh_options_set(s.ssh, SSH_OPTIONS_HOST, host.c_str());
  ssh_options_set(s.ssh, SSH_OPTIONS_PORT, &port);
  ssh_options_set(s.ssh, SSH_OPTIONS_USER, user.c_str());
  ssh_options_set(s.ssh, SSH_OPTIONS_KNOWNHOSTS, known_hosts.c_str());
  ssh_options_set(s.ssh, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  // libssh leaves Nagle's algorithm on: a small request then waits for the ACK of the previous
  // one (40 ms of delayed ACK now and then). OpenSSH, under sshfs, sets TCP_NODELAY.
  const int nodelay = 1;
  ssh_options_set(s.ssh, SSH_OPTIONS_NODELAY, &nodelay);
  if (ssh_connect(s.ssh) != SSH_OK) return Fail("connect", s.ssh);
  // The server must be the one known_hosts names: the probe never trusts a key it has not seen.
  if (ssh_session_is_known_server(s.ssh) != SSH_KNOWN_HOSTS_OK) {
    return Fail("the server's key is not in " + known_hosts, s.ssh);
  }
  if (ssh_pki_import_privkey_file(key_path.c_str(), nullptr, nullptr, nullptr, &s.key) != SSH_OK) {
    return Fail("cannot read the key " + key_path, s.ssh);
  }
  if (ssh_userauth_publickey(s.ssh, nullptr, s.key) != SSH_AUTH_SUCCESS) {
    return Fail("authentication", s.ssh);
  }
  s.sftp = sftp_new(s.ssh);
  if (s.sftp == nullptr || sftp_init(s.sftp) != SSH_OK) return Fail("sftp", s.ssh);
  s.file = sftp_open(s.sftp, path.c_str(), O_RDONLY, 0);
  if (s.file == nullptr) return Fail("open " + path, s.ssh);
  sftp_attributes a = sftp_fstat(s.file);
  if (a == nullptr) return Fail("fstat " + path, s.ssh);
  const uint64_t blocks = a->size / bs;
  sftp_attributes_free(a);
  if (blocks == 0) return Fail(path + " is smaller than one block", s.ssh);

  std::mt19937_64 rng(1);
  std::vector<char> buf(bs);
  std::vector<double> us;
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  for (auto now = Clock::now(); now < end;) {
    const uint64_t at = rng() % blocks * bs;
    if (sftp_seek64(s.file, at) != 0) return Fail("seek", s.ssh);
    const ssize_t n = sftp_read(s.file, buf.data(), bs);
    const auto after = Clock::now();
    if (n != static_cast<ssize_t>(bs)) return Fail("read at " + std::to_string(at), s.ssh);
    us.push_back(std::chrono::duration<double, std::micro>(after - now).count());
    now = after;
  }
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  std::printf("{\"reads\": %zu, \"mean_us\": %.3f, \"p50_us\": %.3f, \"p99_us\": %.3f}\n",
              us.size(), sum / static_cast<double>(us.size()), us[us.size() / 2],
              us[us.size() * 99 / 100]);
  return 0;
}
