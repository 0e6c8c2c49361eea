// fuse_rtt: the round trip of an 8 KiB read through FUSE, ccfs against the null-FUSE floor.
//
// In one run it mounts bench/null_fuse (the floor: reads answered from a static buffer) under each
// request loop asked for, and ccfs over a small dataset on real disk with memory far above the
// dataset and compressed_percent = 0, warmed so every read is a raw-tier hit. Against each it
// measures 8 KiB pread at queue depth 1 (mean, p50, p99 µs, timed per call; the reader's CPU
// migrations per read; and again with the reader pinned to CPU 0) and the throughput of
// one and of two reader threads, then prints ccfs/floor and 2-reader/1-reader ratios. Numbers on a
// shared VM are noisy: compare ratios from the same run.
//
// --transports dev,uring adds, in the same rounds (interleaved), the null file system and ccfs on
// FUSE over io_uring (null_fuse --uring, ccfs transport=uring; the kernel's enable_uring must be
// on) and prints uring against the best /dev/fuse target of each: QD1 mean and p99, 2-reader IOPS.
//
//   fuse_rtt [--null PATH] [--ccfs PATH] [--dir /var/tmp] [--file-mib 32] [--ops 20000]
//            [--seconds 2] [--rounds 3] [--null-loops single,fixed:1,fixed:2,mt:2]
//            [--ccfs-threads 1,2] [--transports dev,uring]
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "util/mount_table.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using ccfs::IsMounted;
using Clock = std::chrono::steady_clock;
constexpr size_t kReadSize = 8192;

pid_t Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, v[0], nullptr, nullptr, v.data(), environ) != 0) return -1;
  return pid;
}

// Waits for `mountpoint` to appear in /proc/mounts while `pid` lives.
bool WaitMounted(pid_t pid, const std::string& mountpoint) {
  for (int i = 0; i < 1000; ++i) {
    if (IsMounted(mountpoint)) return true;
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int Unmount(pid_t pid, const std::string& mountpoint) {
  std::string cmd = "fusermount3 -u " + mountpoint;
  if (system(cmd.c_str()) != 0) system(("fusermount3 -uz " + mountpoint + " 2>/dev/null").c_str());
  int status = 0;
  for (int i = 0; i < 500; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return 137;
}

struct Result {
  std::string name;
  double mean_us = 0, p50_us = 0, p99_us = 0;
  double migrations = 0;  // CPU migrations of the reader per read, unpinned QD1 (-1: no counter)
  double pin_mean_us = 0, pin_p99_us = 0;  // QD1 with the reader pinned to one CPU
  double iops1 = 0, iops2 = 0;
  bool ok = false;
};

std::vector<uint64_t> RandomOffsets(uint64_t file_size, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  uint64_t pages = file_size / kReadSize;
  std::vector<uint64_t> v(n);
  for (auto& o : v) o = rng() % pages * kReadSize;
  return v;
}

// Counts the calling thread's CPU migrations (a software event: no PMU needed). -1 when the
// kernel refuses the counter (perf_event_paranoid), so the column reads "-" rather than 0.
class MigrationCounter {
 public:
  MigrationCounter() {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_MIGRATIONS;
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  }
  ~MigrationCounter() {
    if (fd_ >= 0) close(fd_);
  }
  int64_t Read() const {
    uint64_t v = 0;
    if (fd_ < 0 || read(fd_, &v, sizeof(v)) != sizeof(v)) return -1;
    return static_cast<int64_t>(v);
  }

 private:
  int fd_ = -1;
};

// QD1 reads timed one by one, on a thread of its own so that pinning it (pin_cpu >= 0) leaves the
// caller alone. Unpinned, the reader's migrations per read are counted: on an idle 2-CPU machine
// the scheduler wakes a reader whose request was answered on its own CPU (the io_uring transport)
// on the other, idle CPU, and that wake-up, not the transport, is then most of the trip.
bool MeasureQd1(const std::string& path, uint64_t file_size, int ops, int pin_cpu, double* mean_us,
                double* p99_us, double* p50_us, double* migrations) {
  bool ok = false;
  std::thread reader([&] {
    if (pin_cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(pin_cpu, &set);
      if (sched_setaffinity(0, sizeof(set), &set) != 0) return;
    }
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return;
    std::vector<char> buf(kReadSize);
    std::vector<double> us;
    us.reserve(ops);
    MigrationCounter counter;
    const int64_t before = counter.Read();
    for (uint64_t off : RandomOffsets(file_size, ops, 1)) {
      auto t0 = Clock::now();
      ssize_t n = pread(fd, buf.data(), kReadSize, static_cast<off_t>(off));
      auto t1 = Clock::now();
      if (n != static_cast<ssize_t>(kReadSize)) {
        close(fd);
        return;
      }
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    const int64_t after = counter.Read();
    close(fd);
    double sum = 0;
    for (double x : us) sum += x;
    std::sort(us.begin(), us.end());
    *mean_us = sum / us.size();
    if (p50_us != nullptr) *p50_us = us[us.size() / 2];
    *p99_us = us[us.size() * 99 / 100];
    if (migrations != nullptr) {
      *migrations = before < 0 || after < 0 ? -1.0 : static_cast<double>(after - before) / ops;
    }
    ok = true;
  });
  reader.join();
  return ok;
}

// Reads per second over `seconds` with `readers` threads, each with its own fd.
double MeasureThroughput(const std::string& path, uint64_t file_size, int readers, double seconds) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t) {
    threads.emplace_back([&, t] {
      int fd = open(path.c_str(), O_RDONLY);
      if (fd < 0) return;
      std::vector<char> buf(kReadSize);
      std::vector<uint64_t> offs = RandomOffsets(file_size, 4096, 100 + t);
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (pread(fd, buf.data(), kReadSize, static_cast<off_t>(offs[n % offs.size()])) <= 0) break;
        ++n;
      }
      total += n;
      close(fd);
    });
  }
  auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  return total.load() / elapsed;
}

void Measure(const std::string& file, uint64_t size, int ops, double seconds, Result* r) {
  r->ok = MeasureQd1(file, size, ops, -1, &r->mean_us, &r->p99_us, &r->p50_us, &r->migrations) &&
          MeasureQd1(file, size, ops, 0, &r->pin_mean_us, &r->pin_p99_us, nullptr, nullptr);
  if (!r->ok) return;
  r->iops1 = MeasureThroughput(file, size, 1, seconds);
  r->iops2 = MeasureThroughput(file, size, 2, seconds);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string self_dir = fs::absolute(fs::path(argv[0])).parent_path().string();
  std::string null_bin = self_dir + "/null_fuse", ccfs_bin = self_dir + "/ccfs";
  std::string dir = "/var/tmp", null_loops = "single,fixed:1,fixed:2,mt:2", ccfs_threads = "1,2";
  std::string transports = "dev";
  int file_mib = 32, ops = 20000, rounds = 3;
  double seconds = 2;
  CLI::App app{"fuse_rtt: 8 KiB read round trip, ccfs raw hits vs the null-FUSE floor"};
  app.add_option("--null", null_bin, "null_fuse binary");
  app.add_option("--ccfs", ccfs_bin, "ccfs binary");
  app.add_option("--dir", dir, "where the dataset and mount points go (real disk)");
  app.add_option("--file-mib", file_mib, "dataset file size, MiB");
  app.add_option("--ops", ops, "reads timed one by one at queue depth 1");
  app.add_option("--seconds", seconds, "duration of each throughput run");
  app.add_option("--rounds", rounds, "repeat everything; report the median per target");
  app.add_option("--null-loops", null_loops, "null_fuse loops: single, fixed:N, mt:N, mt:N:clone");
  app.add_option("--ccfs-threads", ccfs_threads, "ccfs request_threads values to measure");
  app.add_option("--transports", transports, "dev and/or uring (FUSE over io_uring), comma-separated");
  CLI11_PARSE(app, argc, argv);

  char tmpl[4096];
  snprintf(tmpl, sizeof(tmpl), "%s/ccfs_rtt.XXXXXX", dir.c_str());
  if (mkdtemp(tmpl) == nullptr) {
    perror("mkdtemp");
    return 1;
  }
  std::string root = tmpl, mnt = root + "/mnt", data = root + "/data";
  fs::create_directories(mnt);
  fs::create_directories(data);
  uint64_t size = static_cast<uint64_t>(file_mib) << 20;
  {
    std::ofstream out(data + "/file", std::ios::binary);
    std::mt19937_64 rng(7);
    std::vector<uint64_t> chunk(1 << 13);
    for (uint64_t done = 0; done < size; done += chunk.size() * 8) {
      for (auto& w : chunk) w = rng();
      out.write(reinterpret_cast<const char*>(chunk.data()), chunk.size() * 8);
    }
  }

  const std::vector<std::string> transport_list = Split(transports, ',');
  const bool with_dev = std::count(transport_list.begin(), transport_list.end(), "dev") > 0;
  const bool with_uring = std::count(transport_list.begin(), transport_list.end(), "uring") > 0;
  // Null targets: each /dev/fuse loop asked for, then the ring (one /dev/fuse thread beside it).
  std::vector<std::string> null_specs = with_dev ? Split(null_loops, ',') : std::vector<std::string>{};
  if (with_uring) null_specs.push_back("uring");
  // ccfs targets: (transport, request_threads).
  std::vector<std::pair<std::string, std::string>> ccfs_targets;
  for (const std::string& t : transport_list) {
    for (const std::string& threads : Split(ccfs_threads, ',')) ccfs_targets.emplace_back(t, threads);
  }

  std::vector<std::vector<Result>> rounds_results;
  for (int round = 0; round < rounds; ++round) {
  std::vector<Result> results;
  for (const std::string& spec : null_specs) {
    std::vector<std::string> parts = Split(spec, ':');
    std::vector<std::string> cmd = {null_bin, mnt, "--size", std::to_string(size)};
    if (spec == "uring") {
      cmd.insert(cmd.end(), {"--uring", "--loop", "fixed", "--threads", "1"});
    } else {
      cmd.insert(cmd.end(), {"--loop", parts[0]});
      if (parts.size() > 1) cmd.insert(cmd.end(), {"--threads", parts[1]});
      if (parts.size() > 2 && parts[2] == "clone") cmd.push_back("--clone-fd");
    }
    Result r;
    r.name = "null " + spec;
    pid_t pid = Spawn(cmd);
    if (pid > 0 && WaitMounted(pid, mnt)) {
      Measure(mnt + "/data", size, ops, seconds, &r);
      Unmount(pid, mnt);
    } else {
      fprintf(stderr, "fuse_rtt: %s did not mount\n", r.name.c_str());
    }
    results.push_back(r);
  }
  for (const auto& [transport, threads] : ccfs_targets) {
    Result r;
    r.name = (transport == "dev" ? "ccfs request_threads=" : "ccfs uring request_threads=") + threads;
    std::string opts = "memory=" + std::to_string(file_mib * 4) +
                       "MiB,compressed_percent=0,request_threads=" + threads +
                       ",transport=" + transport;
    pid_t pid = Spawn({ccfs_bin, "mount", "-f", "-o", opts, data, mnt});
    if (pid > 0 && WaitMounted(pid, mnt)) {
      // Warm: two sequential passes make every page a raw-tier hit.
      for (int pass = 0; pass < 2; ++pass) {
        int fd = open((mnt + "/file").c_str(), O_RDONLY);
        std::vector<char> buf(1 << 17);
        while (fd >= 0 && read(fd, buf.data(), buf.size()) > 0) {
        }
        if (fd >= 0) close(fd);
      }
      Measure(mnt + "/file", size, ops, seconds, &r);
      std::string json;
      {
        std::ifstream stats(mnt + "/.ccfs/stats.json");
        json.assign(std::istreambuf_iterator<char>(stats), std::istreambuf_iterator<char>());
      }
      auto pos = json.find("\"misses\"");
      if (pos != std::string::npos) {
        fprintf(stderr, "fuse_rtt: %s: %s after warm-up and measurement (the warm-up's only)\n",
                r.name.c_str(), json.substr(pos, json.find_first_of(",}", pos) - pos).c_str());
      }
      int rc = Unmount(pid, mnt);
      if (rc != 0) fprintf(stderr, "fuse_rtt: ccfs exited %d\n", rc);
    } else {
      fprintf(stderr, "fuse_rtt: %s did not mount\n", r.name.c_str());
    }
    results.push_back(r);
  }
  rounds_results.push_back(results);
  }
  fs::remove_all(root);
  // Per target, the median of each figure over the rounds: other load on a shared machine
  // spoils some rounds, rarely the same target in most of them.
  std::vector<Result> results;
  for (size_t t = 0; t < rounds_results[0].size(); ++t) {
    Result m = rounds_results[0][t];
    auto median = [&](double Result::*field) {
      std::vector<double> v;
      for (const auto& rr : rounds_results) {
        if (rr[t].ok) v.push_back(rr[t].*field);
      }
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    m.ok = median(&Result::mean_us) > 0;
    m.mean_us = median(&Result::mean_us);
    m.p50_us = median(&Result::p50_us);
    m.p99_us = median(&Result::p99_us);
    m.migrations = median(&Result::migrations);
    m.pin_mean_us = median(&Result::pin_mean_us);
    m.pin_p99_us = median(&Result::pin_p99_us);
    m.iops1 = median(&Result::iops1);
    m.iops2 = median(&Result::iops2);
    results.push_back(m);
  }
  printf("median of %d round(s), %d timed reads and %.1f s per throughput run each\n\n", rounds,
         ops, seconds);

  printf("%-28s %9s %9s %9s %8s %9s %9s %11s %11s %8s\n", "target", "mean_us", "p50_us",
         "p99_us", "migr/rd", "pin_mean", "pin_p99", "iops_1rd", "iops_2rd", "2rd/1rd");
  const Result* floor = nullptr;
  for (const Result& r : results) {
    if (!r.ok) {
      printf("%-28s   failed\n", r.name.c_str());
      continue;
    }
    if (floor == nullptr && r.name.rfind("null", 0) == 0) floor = &r;
    char migr[16] = "-";
    if (r.migrations >= 0) snprintf(migr, sizeof(migr), "%.2f", r.migrations);
    printf("%-28s %9.2f %9.2f %9.2f %8s %9.2f %9.2f %11.0f %11.0f %8.2f\n", r.name.c_str(),
           r.mean_us, r.p50_us, r.p99_us, migr, r.pin_mean_us, r.pin_p99_us, r.iops1,
           r.iops2, r.iops2 / r.iops1);
  }
  if (floor != nullptr) {
    printf("\nfloor = %s\n", floor->name.c_str());
    for (const Result& r : results) {
      if (!r.ok || &r == floor) continue;
      printf("%-28s QD1 mean %.2fx floor, p50 %.2fx floor; 2 readers %.2fx one\n",
             r.name.c_str(), r.mean_us / floor->mean_us, r.p50_us / floor->p50_us,
             r.iops2 / r.iops1);
    }
    // ccfs against the null file system served by the same loop and thread count: what the
    // cache itself costs per request, with the loop's own cost taken out.
    const std::string prefix = "ccfs request_threads=";
    for (const Result& r : results) {
      if (!r.ok || r.name.rfind(prefix, 0) != 0) continue;
      std::string same = "null fixed:" + r.name.substr(prefix.size());
      for (const Result& n : results) {
        if (n.ok && n.name == same) {
          printf("%-28s vs %s: QD1 mean %.2fx, p50 %.2fx\n", r.name.c_str(), same.c_str(),
                 r.mean_us / n.mean_us, r.p50_us / n.p50_us);
        }
      }
    }
  }
  // The ring against the best /dev/fuse target of the same kind (lowest QD1 mean).
  for (const char* kind : {"null ", "ccfs "}) {
    const Result* best_dev = nullptr;
    for (const Result& r : results) {
      if (!r.ok || r.name.rfind(kind, 0) != 0 || r.name.find("uring") != std::string::npos) continue;
      if (best_dev == nullptr || r.mean_us < best_dev->mean_us) best_dev = &r;
    }
    if (best_dev == nullptr) continue;
    for (const Result& r : results) {
      if (!r.ok || r.name.rfind(kind, 0) != 0 || r.name.find("uring") == std::string::npos) continue;
      printf("%-28s vs %s: QD1 mean %.2fx, p50 %.2fx, p99 %.2fx; reader pinned: mean %.2fx, "
             "p99 %.2fx; 2-reader IOPS %.2fx\n",
             r.name.c_str(), best_dev->name.c_str(), r.mean_us / best_dev->mean_us,
             r.p50_us / best_dev->p50_us, r.p99_us / best_dev->p99_us,
             r.pin_mean_us / best_dev->pin_mean_us, r.pin_p99_us / best_dev->pin_p99_us,
             r.iops2 / best_dev->iops2);
    }
  }
  return 0;
}
