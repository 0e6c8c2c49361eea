// Bad input end to end, through the ccfs binary: config files, command lines, .ccfs/control
// writes and trace files. Each must give a message naming the key or line and a non-zero exit
// (or EINVAL for control writes) — never a crash (exit >= 128), never a partial mount.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "ccfs/options.h"
#include "fs/metrics_test_util.h"
#include "reliability/reliability_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class BadInputTest : public MountTest {
 protected:
  // Runs `ccfs mount -f ARGS DATA MNT` expecting a refusal whose output mentions `mention`.
  void ExpectMountRefused(const std::vector<std::string>& args, const std::string& mention,
                          const std::string& dataset = "", const std::string& mnt = "") {
    std::vector<std::string> argv = {"mount", "-f"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(dataset.empty() ? ds_.data() : dataset);
    argv.push_back(mnt.empty() ? ds_.mnt() : mnt);
    CommandResult r = RunCcfs(argv, 20);
    std::string shown;
    for (const auto& a : argv) shown += a + " ";
    EXPECT_NE(r.exit_code, 0) << shown << "\n" << r.output;
    EXPECT_LT(r.exit_code, 128) << shown << ": crashed\n" << r.output;
    EXPECT_NE(r.output.find(mention), std::string::npos)
        << shown << ": message does not name \"" << mention << "\":\n" << r.output;
    EXPECT_FALSE(IsMounted(ds_.mnt())) << shown << ": left a mount";
    if (IsMounted(ds_.mnt())) RunCommand({"fusermount3", "-uz", ds_.mnt()});
  }
  std::string Conf(const std::string& name, const std::string& text) {
    std::string path = ds_.root() + "/" + name;
    WriteWholeFile(path, text);
    return path;
  }
};

TEST_F(BadInputTest, ConfigFiles) {
  ExpectMountRefused({"--config", Conf("unknown.toml", "[cache]\nmemroy = \"1GiB\"\n")},
                     "unknown.toml:2");
  ExpectMountRefused({"--config", Conf("unknown2.toml", "[cache]\nmemroy = \"1GiB\"\n")}, "memroy");
  ExpectMountRefused({"--config", Conf("type.toml", "[cache]\ncompressed_percent = \"lots\"\n")},
                     "compressed_percent");
  ExpectMountRefused({"--config", Conf("range.toml", "\n[cache]\ncompressed_percent = 120\n")},
                     "range.toml:3");
  ExpectMountRefused({"--config", Conf("unit.toml", "[cache]\nmemory = \"12 parsecs\"\n")},
                     "memory");
  ExpectMountRefused({"--config", Conf("dup.toml", "[cache]\nmemory = \"1GiB\"\nmemory = \"2GiB\"\n")},
                     "dup.toml:3");
  ExpectMountRefused({"--config", Conf("table.toml", "memory = \"1GiB\"\n")}, "[cache]");
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>(Mix(i) & 0xff);
  ExpectMountRefused({"--config", Conf("garbage.toml", garbage)}, "garbage.toml");
  ExpectMountRefused({"--config", Conf("nul.toml", std::string("[cache]\nmemory = \"1G\0B\"\n", 24))},
                     "nul.toml");
  ExpectMountRefused({"--config", ds_.root() + "/missing.toml"}, "missing.toml");
  ExpectMountRefused({"--config", ds_.root()}, ds_.root());
  // An empty file is documented as "changes nothing": it mounts with the defaults.
  MountOrDie({"--config", Conf("empty.toml", "")});
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), MountDefaults().compressed_percent);
}

// The metrics key: an address that is not one, or one the daemon cannot listen on, refuses the
// mount with a message naming the key and the address, and nothing is mounted.
TEST_F(BadInputTest, MetricsAddresses) {
  ExpectMountRefused({"-o", "metrics=nonsense"}, "metrics = nonsense: must be [HOST:]PORT");
  ExpectMountRefused({"-o", "metrics=127.0.0.1:0"}, "metrics = 127.0.0.1:0");
  ExpectMountRefused({"-o", "metrics=example.com:9567"}, "metrics = example.com:9567");
  ExpectMountRefused({"--config", Conf("metrics.toml", "[daemon]\nmetrics = \"1.2.3:80\"\n")},
                     "metrics.toml:2: metrics = 1.2.3:80");
  // A port in use. The holder sets SO_REUSEPORT: a daemon that set it too would share the port.
  ListeningSocket busy;
  ASSERT_GT(busy.port(), 0);
  const std::string address = "127.0.0.1:" + std::to_string(busy.port());
  ExpectMountRefused({"-o", "metrics=" + address},
                     "metrics = " + address + ": cannot listen on " + address);
  // An address that is not this machine's (TEST-NET-1, RFC 5737).
  ExpectMountRefused({"-o", "metrics=192.0.2.1:9567"}, "metrics = 192.0.2.1:9567: cannot listen");
}

TEST_F(BadInputTest, CommandLines) {
  ExpectMountRefused({"-o", "memory=1GiB,no_such_key=3"}, "no_such_key");
  ExpectMountRefused({"-o", "memory=-1"}, "memory");
  ExpectMountRefused({"-o", "memory=99999999999999999999999"}, "memory");
  ExpectMountRefused({"-o", "page_size=3000"}, "page_size");
  ExpectMountRefused({"-o", "compressor=gzip"}, "compressor");
  ExpectMountRefused({"-o", "compression_level=99,compressor=zstd"}, "compression_level");
  ExpectMountRefused({"-o", "request_threads=0"}, "request_threads");
  ExpectMountRefused({"-o", "attr_timeout=nan"}, "attr_timeout");
  ExpectMountRefused({"-o", "allow_other=maybe"}, "allow_other");
  ExpectMountRefused({}, "missing_dir", ds_.root() + "/missing_dir");
  WriteWholeFile(ds_.root() + "/a_file", "x");
  ExpectMountRefused({}, "a_file", ds_.root() + "/a_file");
  ExpectMountRefused({}, "no_mnt", "", ds_.root() + "/no_mnt");
  ASSERT_EQ(mkdir(ds_.DataPath("inner").c_str(), 0755), 0);
  ExpectMountRefused({}, "inner", "", ds_.DataPath("inner"));
  // Wrong shapes of command line.
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"mount"}, {"mount", ds_.data()}, {"mount", ds_.data(), ds_.mnt(), "extra"},
           {"mount", "--no-such-flag", ds_.data(), ds_.mnt()}, {"no-such-command"},
           {"set", ds_.mnt(), "compressed_percent=10"}, {"stat", ds_.mnt()}}) {
    CommandResult r = RunCcfs(argv, 20);
    EXPECT_NE(r.exit_code, 0) << argv[0] << " " << r.output;
    EXPECT_LT(r.exit_code, 128) << r.output;
    EXPECT_FALSE(r.output.empty());
    EXPECT_FALSE(IsMounted(ds_.mnt()));
  }
  // Taking turns: both flags or neither, two descriptors, open the right way.
  struct Turns {
    std::vector<std::string> flags;
    std::string mention;
  };
  for (const Turns& t : std::vector<Turns>{{{"--turn-fds", "0,1"}, "--turn-ops"},
                                          {{"--turn-ops", "100"}, "--turn-fds"},
                                          {{"--turn-fds", "0", "--turn-ops", "100"}, "IN,OUT"},
                                          {{"--turn-fds", "900,901", "--turn-ops", "100"}, "900"}}) {
    std::vector<std::string> argv = {"replay", "--engine", ds_.data(), "-o", "memory=2MiB",
                                     "--no-progress", "--ops", "100"};
    argv.insert(argv.end(), t.flags.begin(), t.flags.end());
    CommandResult r = RunCcfs(argv, 60);
    EXPECT_NE(r.exit_code, 0) << t.mention << " accepted:\n" << r.output;
    EXPECT_LT(r.exit_code, 128) << r.output;
    EXPECT_NE(r.output.find(t.mention), std::string::npos) << t.mention << ":\n" << r.output;
  }
}

TEST_F(BadInputTest, ControlWritesAreEinvalAndChangeNothing) {
  MountOrDie({"-o", "compressed_percent=30"});
  const nlohmann::json before = ds_.Stats();
  auto write_control = [&](const std::string& text) {
    int fd = open(ds_.MntPath(".ccfs/control").c_str(), O_WRONLY | O_TRUNC);
    if (fd < 0) return errno;
    int err = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
    close(fd);
    return err;
  };
  std::string garbage;
  for (int i = 0; i < 3000; ++i) garbage += static_cast<char>(Mix(i + 7) & 0xff);
  const std::vector<std::string> bad = {
      "no_such_key=1\n",
      "compressed_percent\n",
      "compressed_percent=\n",
      "compressed_percent=96\n",
      "compressed_percent=10\nmemory=1GiB\n",  // second line needs a remount: nothing applied
      "compressed_percent=10\ncompressor=brotli\n",
      "compression_level=99999999999999999999\n",
      "min_savings_percent=-5\n",
      "=\n",
      garbage,
      std::string(200000, 'x'),
  };
  for (const auto& text : bad) {
    EXPECT_EQ(write_control(text), EINVAL) << "accepted: " << text.substr(0, 60);
  }
  nlohmann::json after = ds_.Stats();
  for (const char* key : {"compressed_percent", "compressor", "compression_level"}) {
    EXPECT_EQ(after[key], before[key]) << key << " changed by a refused write";
  }
  std::string log = ds_.DaemonLog();
  EXPECT_NE(log.find("no_such_key"), std::string::npos) << log;
  EXPECT_NE(log.find("memory"), std::string::npos) << log;
  EXPECT_EQ(write_control("compressed_percent=10\n"), 0);  // and the daemon still works
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 10);
}

TEST_F(BadInputTest, TraceFiles) {
  WriteWholeFile(ds_.DataPath("a.txt"), std::string(100000, 'a'));
  WriteWholeFile(ds_.DataPath("b.bin"), std::string(16384, 'b'));
  struct Case {
    std::string name, text, mention;
  };
  const std::vector<Case> cases = {
      {"trunc.csv", "file,offset,length,op\na.txt,0,8192,read\na.txt,8192", "trunc.csv:3"},
      {"huge.csv", "file,offset,length,op\na.txt,99999999999999999999999,1,read\n", "huge.csv:2"},
      {"past.csv", "file,offset,length,op\na.txt,0,1,read\nb.bin,16384,1,read\n", "past.csv:3"},
      {"cols.csv", "file,offset,length,op\na.txt,0,1,read,extra\n", "cols.csv:2"},
      {"op.csv", "file,offset,length,op\na.txt,0,1,erase\n", "op.csv:2"},
      {"neg.csv", "file,offset,length,op\na.txt,-8,1,read\n", "neg.csv:2"},
      {"nofile.csv", "file,offset,length,op\nnope.txt,0,1,read\n", "nofile.csv:2"},
      {"quote.csv", "file,offset,length,op\n\"a.txt,0,1,read\n", "quote.csv:2"},
      {"fio.log", "fio version 2 iolog\n/x/a.txt add\n/x/a.txt open\n/x/a.txt read 0\n", "fio.log:4"},
      {"msr.csv", "1,h,0,Read,0,4096\n", "msr.csv:1"},
      {"binary.bin", std::string("\x00\xff\x01garbage\x00\n", 12), "binary.bin"},
  };
  for (const Case& c : cases) {
    std::string path = ds_.root() + "/" + c.name;
    WriteWholeFile(path, c.text);
    CommandResult r = RunCcfs({"replay", "--engine", ds_.data(), "-o", "memory=2MiB", "--trace",
                               path, "--no-progress"},
                              60);
    EXPECT_NE(r.exit_code, 0) << c.name << " accepted:\n" << r.output;
    EXPECT_LT(r.exit_code, 128) << c.name << " crashed:\n" << r.output;
    EXPECT_NE(r.output.find(c.mention), std::string::npos)
        << c.name << ": message does not name \"" << c.mention << "\":\n" << r.output;
  }
}

}  // namespace
}  // namespace ccfs::testing
