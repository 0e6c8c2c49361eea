// The metrics endpoint over cpp-httplib.
//
// Socket options: cpp-httplib 0.11's default sets SO_REUSEPORT, which lets a second process bind
// a port that is already listening; two mounts given the same `metrics` address would then share
// it and the kernel would hand each scrape to either daemon at random. The server sets
// SO_REUSEADDR only (a restarted daemon can bind again while old connections sit in TIME_WAIT),
// so a port in use fails the mount instead.
//
// Start waits until the listening thread runs: httplib's stop() does nothing before the accept
// loop has started, so a Stop() right after Start() would otherwise be lost and the join would
// hang.
#include "fuse/metrics_server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <utility>

#include "stats/prometheus.h"

namespace ccfs {

namespace {

constexpr int kWorkers = 2;
// A scraper sends its request at once and reads a few kB; a client that takes longer is dropped,
// so it holds a worker (and delays an unmount) at most this long.
constexpr int kTimeoutSeconds = 2;

void ReuseAddressOnly(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

}  // namespace

struct MetricsServer::Impl {
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> listen_returned{false};
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() { Stop(); }

Status MetricsServer::Start(const ListenAddress& address, Render render,
                            std::unique_ptr<MetricsServer>* server) {
  auto impl = std::make_unique<Impl>();
  httplib::Server& http = impl->http;
  http.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  http.set_socket_options(ReuseAddressOnly);
  http.set_keep_alive_max_count(1);
  http.set_keep_alive_timeout(kTimeoutSeconds);  // also how long a new connection may stay silent
  http.set_read_timeout(kTimeoutSeconds, 0);
  http.set_write_timeout(kTimeoutSeconds, 0);
  http.Get("/metrics",
           [render = std::move(render)](const httplib::Request&, httplib::Response& res) {
             res.set_content(render(), kPrometheusContentType);
           });

  errno = 0;
  if (!http.bind_to_port(address.host, address.port)) {
    int err = errno;
    return Status::IOError(err, "cannot listen on " + address.ToString());
  }
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the workers start from here and inherit it
    raw->http.listen_after_bind();
    raw->listen_returned = true;
  });
  while (!raw->http.is_running() && !raw->listen_returned) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!raw->http.is_running()) {
    raw->thread.join();
    return Status::IOError(0, "cannot listen on " + address.ToString());
  }
  server->reset(new MetricsServer(std::move(impl)));
  return Status::Ok();
}

void MetricsServer::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->http.stop();
  impl_->thread.join();
}

}  // namespace ccfs
