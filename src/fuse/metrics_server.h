// MetricsServer: the daemon's HTTP endpoint for Prometheus (the `metrics` key).
//
// Answers GET /metrics (and HEAD) with the text `render` returns, as Content-Type
// kPrometheusContentType (src/stats/prometheus.h); any other path is 404. The HTTP side is
// cpp-httplib (Debian's libcpp-httplib-dev): one listening thread and two worker threads, all
// started by Start and joined by Stop. Connections are not kept alive, and a client that sends or
// reads too slowly is dropped after 2 seconds, so no client can hold a worker for long.
//
// Never blocks a read: `render` runs on a worker thread of this server. The daemon's takes a
// snapshot (PageCache::Stats: relaxed loads of the counters, plus a copy of the compressed tier's
// six sizes under its mutex, as an open of .ccfs/stats.json does) and renders it; nothing on the
// read path waits for the server, its client or the rendering.
//
// Signals: the server's threads block every signal, so the daemon's handlers run where it expects.
//
// Ownership: the server owns its socket and threads. `render` and whatever it uses must stay
// valid until Stop returns (the destructor stops).
//
// Thread-safety: Start, Stop and the destructor from one thread (the daemon's main thread);
// `render` is called from the worker threads, up to two at once.
#ifndef CCFS_FUSE_METRICS_SERVER_H_
#define CCFS_FUSE_METRICS_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "ccfs/status.h"
#include "config/listen_address.h"

namespace ccfs {

class MetricsServer {
 public:
  using Render = std::function<std::string()>;

  // Listens on `address` and starts serving. An address the daemon cannot listen on (a port in
  // use, an address that is not this machine's) is an error saying "cannot listen on ADDRESS"
  // and why; nothing is left running then. The port is held by this server alone: a second
  // server (another mount) on the same address fails here rather than sharing it.
  static Status Start(const ListenAddress& address, Render render,
                      std::unique_ptr<MetricsServer>* server);

  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Stops listening, lets requests in flight finish and joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_METRICS_SERVER_H_
