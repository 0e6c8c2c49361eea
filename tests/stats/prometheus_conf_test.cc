// The operator's files in conf/: the Grafana dashboard (conf/grafana/ccfs-dashboard.json) and the
// alert rules (conf/prometheus/ccfs-alerts.yml) name only metrics the daemon exports, every panel
// has a query, and Prometheus's own checker (promtool, from scripts/setup.sh) accepts the rules.
// The exported names are read from RenderPrometheus with every family present (counters, a
// request per op kind), so a renamed or removed metric fails here before a dashboard goes blank.
#include <unistd.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "stats/prometheus.h"
#include "stats/request_stats.h"
#include "stats/stats_test_util.h"
#include "testing/command.h"

namespace ccfs {
namespace {

using testing::ReadWholeFile;
using testing::RunCommand;

const std::string kDashboard = std::string(CCFS_SOURCE_DIR) + "/conf/grafana/ccfs-dashboard.json";
const std::string kRules = std::string(CCFS_SOURCE_DIR) + "/conf/prometheus/ccfs-alerts.yml";

// Metric families of the daemon's exposition, with their TYPE.
std::map<std::string, std::string> ExportedFamilies() {
  RequestStats requests({"lookup", "read"});
  requests.Record(0, 1'000);
  requests.Record(1, 20'000);
  DaemonIdentity daemon;
  daemon.dataset = "/srv/data";
  daemon.mountpoint = "/mnt/ccfs";
  const std::string text = RenderPrometheus(DistinctStats(), daemon, "v", requests.Snapshot());
  std::map<std::string, std::string> families;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    std::istringstream words(line.substr(7));
    std::string name, type;
    words >> name >> type;
    families[name] = type;
  }
  return families;
}

// The metric names a PromQL expression uses: every ccfs_* and process_* word outside quoted
// label values (Prometheus's own `up` is not ours to check).
std::set<std::string> MetricNames(const std::string& expr) {
  static const std::regex kQuoted(R"("([^"\\]|\\.)*")");
  static const std::regex kName(R"((^|[^A-Za-z0-9_:])((ccfs|process)_[A-Za-z0-9_:]*))");
  const std::string bare = std::regex_replace(expr, kQuoted, "\"\"");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(bare.begin(), bare.end(), kName);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[2].str());
  }
  return names;
}

// The names of `expr` that the exposition lacks; a histogram is named by its family or by one of
// its series (_bucket, _sum, _count).
std::vector<std::string> Unknown(const std::string& expr,
                                 const std::map<std::string, std::string>& families) {
  std::vector<std::string> unknown;
  for (const std::string& name : MetricNames(expr)) {
    if (families.count(name)) continue;
    bool series = false;
    for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
      if (name.size() > suffix.size() && name.ends_with(suffix)) {
        auto it = families.find(name.substr(0, name.size() - suffix.size()));
        series = series || (it != families.end() && it->second == "histogram");
      }
    }
    if (!series) unknown.push_back(name);
  }
  return unknown;
}

// Every query of the dashboard: the panels' target expressions and the variables' queries.
void CollectQueries(const nlohmann::json& j, std::vector<std::string>* out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if ((key == "expr" || key == "query" || key == "definition") && value.is_string()) {
        out->push_back(value.get<std::string>());
      } else {
        CollectQueries(value, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& item : j) CollectQueries(item, out);
  }
}

// The `expr:` values of a rule file: on the line, or the indented block after `expr: |`.
std::vector<std::string> RuleExpressions(const std::string& yaml) {
  std::vector<std::string> exprs;
  std::vector<std::string> lines;
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t indent = lines[i].find_first_not_of(' ');
    if (indent == std::string::npos || lines[i].compare(indent, 5, "expr:") != 0) continue;
    std::string value = lines[i].substr(indent + 5);
    value.erase(0, value.find_first_not_of(' '));
    if (value.empty() || value[0] == '|' || value[0] == '>') {
      value.clear();
      while (i + 1 < lines.size() && (lines[i + 1].empty() ||
                                      lines[i + 1].find_first_not_of(' ') > indent)) {
        value += lines[++i] + "\n";
      }
    }
    exprs.push_back(value);
  }
  return exprs;
}

// promtool from scripts/setup.sh (.tools/bin) or PATH; "" when there is none.
std::string Promtool() {
  std::string local = std::string(CCFS_SOURCE_DIR) + "/.tools/bin/promtool";
  if (access(local.c_str(), X_OK) == 0) return local;
  if (RunCommand({"promtool", "--version"}, 10).exit_code == 0) return "promtool";
  return "";
}

TEST(PrometheusConfTest, TheCheckFindsANameThatDoesNotExist) {
  const auto families = ExportedFamilies();
  EXPECT_EQ(Unknown("rate(ccfs_reads_total{path=\"ccfs_x\"}[5m])", families),
            std::vector<std::string>{});
  EXPECT_EQ(Unknown("histogram_quantile(0.9, rate(ccfs_read_seconds_bucket[5m]))", families),
            std::vector<std::string>{});
  EXPECT_EQ(Unknown("rate(ccfs_no_such_total[5m]) / process_open_fds", families),
            std::vector<std::string>{"ccfs_no_such_total"});
  EXPECT_EQ(Unknown("ccfs_reads_total_bucket + ccfs_compressed_percentage", families),
            (std::vector<std::string>{"ccfs_compressed_percentage", "ccfs_reads_total_bucket"}))
      << "only a histogram has _bucket series";
}

TEST(PrometheusConfTest, DashboardQueriesNameOnlyExportedMetrics) {
  const auto families = ExportedFamilies();
  const nlohmann::json dashboard = nlohmann::json::parse(ReadWholeFile(kDashboard));
  std::vector<std::string> queries;
  CollectQueries(dashboard, &queries);
  ASSERT_GE(queries.size(), 20u);
  std::set<std::string> used;
  for (const std::string& q : queries) {
    SCOPED_TRACE(q);
    EXPECT_EQ(Unknown(q, families), std::vector<std::string>{});
    for (const std::string& name : MetricNames(q)) used.insert(name);
  }
  // Every panel shows something: a query naming one of our metrics.
  int panels = 0;
  for (const auto& panel : dashboard.at("panels")) {
    if (panel.at("type") == "row") continue;
    ++panels;
    SCOPED_TRACE(panel.at("title").get<std::string>());
    ASSERT_TRUE(panel.contains("targets"));
    ASSERT_FALSE(panel.at("targets").empty());
    for (const auto& target : panel.at("targets")) {
      EXPECT_FALSE(MetricNames(target.at("expr").get<std::string>()).empty());
    }
  }
  EXPECT_GE(panels, 10);
  // What an operator looks for first is there.
  for (const char* name : {"ccfs_reads_total", "ccfs_read_bytes_total", "ccfs_read_seconds_sum",
                           "ccfs_fuse_requests_total", "ccfs_fuse_request_seconds_bucket",
                           "process_resident_memory_bytes", "process_open_fds",
                           "ccfs_compression_ratio", "ccfs_stalls_total"}) {
    EXPECT_TRUE(used.count(name)) << name << " is on no panel";
  }
}

TEST(PrometheusConfTest, AlertRulesNameOnlyExportedMetrics) {
  const auto families = ExportedFamilies();
  const std::vector<std::string> exprs = RuleExpressions(ReadWholeFile(kRules));
  ASSERT_GE(exprs.size(), 6u);
  for (const std::string& e : exprs) {
    SCOPED_TRACE(e);
    EXPECT_EQ(Unknown(e, families), std::vector<std::string>{});
    if (e.find("up{") == std::string::npos) {
      EXPECT_FALSE(MetricNames(e).empty());
    }
  }
}

TEST(PrometheusConfTest, PromtoolAcceptsTheAlertRules) {
  const std::string promtool = Promtool();
  if (promtool.empty()) {
    GTEST_SKIP() << "promtool not found: run scripts/setup.sh (it extracts promtool from Debian's "
                    "prometheus package into .tools/bin) or install it on PATH";
  }
  testing::CommandResult r = RunCommand({promtool, "check", "rules", kRules});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SUCCESS"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ccfs
