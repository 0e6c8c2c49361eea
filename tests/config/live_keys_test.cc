// The key table's "live" flags against what a running daemon really does: for every key, a change
// made through the engine (PageCache::Reconfigure), through .ccfs/control
// (ControlDir::ApplyControlText) and through SIGHUP (ControlDir::ApplyLiveOptions) takes effect
// exactly when the table calls the key live, and is refused or left for a remount otherwise.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ccfs/config.h"
#include "ccfs/page_cache.h"
#include "config/config_test_util.h"
#include "config/keys.h"
#include "config/live_options.h"
#include "fuse/control_dir.h"
#include "fuse/filesystem.h"

namespace ccfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A small engine's settings; AllNonDefault() has a valid other value for each key.
Options Base() {
  Options o;
  o.memory = 4 << 20;
  o.compress_threads = 1;
  return o;
}

// The keys AllNonDefault() changes that are valid changed alone over Base(): all but
// kernel_demote, which has no other valid value beside its kernel_evict = false, and passthrough,
// which needs raw_tier = kernel (KernelDemoteIsNotLive and PassthroughIsNotLive cover them).
// `each_alone` false: every key AllNonDefault() changes (all but kernel_demote), valid together.
std::vector<config::KeySpec> ChangedByAllNonDefault(bool each_alone = true) {
  std::vector<config::KeySpec> keys;
  for (const config::KeySpec& key : config::AllKeys()) {
    if (each_alone && key.name == std::string_view("passthrough")) continue;
    if (!config::SameField(key, AllNonDefault(), Options{})) keys.push_back(key);
  }
  EXPECT_EQ(keys.size() + (each_alone ? 2 : 1), config::AllKeys().size());
  return keys;
}

// `base` with `key` alone taken from AllNonDefault(); checked to differ in that key only and to
// be valid, so a refusal can only be about liveness.
Options ChangeOneKey(const Options& base, const config::KeySpec& key) {
  Options changed = base;
  config::CopyField(key, AllNonDefault(), &changed);
  EXPECT_THAT(ChangedKeys(base, changed), ElementsAre(std::string(key.name)));
  EXPECT_TRUE(changed.Validate().ok()) << changed.Validate().message();
  return changed;
}

class LiveKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(PageCache::Create(Base(), &cache_).ok());
    Filesystem::Config config;
    config.dataset = "/";  // only opened as a directory descriptor; nothing is served
    config.mountpoint = "/nonexistent";
    ASSERT_TRUE(Filesystem::Create(config, cache_.get(), &fs_).ok());
  }

  // For every key: `apply` asks for a change of that key alone. A live key must be applied as
  // asked; any other must be refused with a message containing "KEY<refusal>", changing nothing.
  using Apply = std::function<Status(const Options& wanted, const std::string& key)>;
  void ExpectAppliedExactlyWhenLive(const Apply& apply, const std::string& refusal) {
    for (const config::KeySpec& key : ChangedByAllNonDefault()) {
      const std::string name(key.name);
      SCOPED_TRACE(name);
      const Options before = cache_->options();
      const Options wanted = ChangeOneKey(before, key);
      Status s = apply(wanted, name);
      if (key.live) {
        ASSERT_TRUE(s.ok()) << s.message();
        EXPECT_EQ(cache_->options(), wanted);
        ASSERT_TRUE(cache_->Reconfigure(before).ok());
      } else {
        ASSERT_FALSE(s.ok());
        EXPECT_THAT(s.message(), HasSubstr(name + refusal));
        EXPECT_EQ(cache_->options(), before);
      }
    }
  }

  std::unique_ptr<PageCache> cache_;
  std::unique_ptr<Filesystem> fs_;
};

TEST_F(LiveKeysTest, EngineAppliesExactlyTheLiveKeys) {
  ExpectAppliedExactlyWhenLive([&](const Options& wanted, const std::string&) {
    Status s = cache_->Reconfigure(wanted);
    EXPECT_TRUE(s.ok() || s.code() == Status::Code::kNotSupported) << s.message();
    return s;
  }, ": cannot change while mounted (needs a remount)");
}

TEST_F(LiveKeysTest, ControlFileAppliesExactlyTheLiveKeys) {
  ExpectAppliedExactlyWhenLive([&](const Options& wanted, const std::string& key) {
    return fs_->control().ApplyControlText(DescribeKey(wanted, key) + "\n");
  }, " cannot change while mounted: needs a remount");
}

// Kernel-mode keys that no change alone over Base() can make valid: `change` sets one on an
// engine in kernel mode, which must refuse it as needing a remount.
void ExpectNotLiveInKernelMode(const std::function<void(Options*)>& change,
                               const std::string& key) {
  Options o = Base();
  o.raw_tier = "kernel";
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  Options wanted = o;
  change(&wanted);
  ASSERT_TRUE(wanted.Validate().ok());
  Status s = cache->Reconfigure(wanted);
  EXPECT_EQ(s.code(), Status::Code::kNotSupported);
  EXPECT_THAT(s.message(), HasSubstr(key + ": cannot change while mounted"));
  EXPECT_EQ(cache->options(), o);
}

TEST(LiveKeysKernelTest, KernelDemoteIsNotLive) {
  ExpectNotLiveInKernelMode([](Options* o) { o->kernel_demote = "mix"; }, "kernel_demote");
}

TEST(LiveKeysKernelTest, PassthroughIsNotLive) {
  ExpectNotLiveInKernelMode([](Options* o) { o->passthrough = true; }, "passthrough");
}

TEST_F(LiveKeysTest, LiveChangesReachTheEnginesStats) {
  Options wanted = cache_->options();
  wanted.compressed_percent = 40;
  wanted.compressor = CodecKind::kZstd;
  wanted.compression_level = 3;
  ASSERT_TRUE(cache_->Reconfigure(wanted).ok());
  CacheStats s = cache_->Stats();
  EXPECT_EQ(s.compressed_percent, 40);
  EXPECT_EQ(s.compressor, static_cast<int>(CodecKind::kZstd));
  EXPECT_EQ(s.compression_level, 3);
  EXPECT_EQ(s.compressed_budget_bytes, wanted.compressed_budget());
}

TEST_F(LiveKeysTest, SighupAppliesTheLiveKeysAndListsTheRest) {
  const Options before = cache_->options();
  std::vector<std::string> needs_remount;
  ASSERT_TRUE(fs_->control().ApplyLiveOptions(AllNonDefault(), "SIGHUP", &needs_remount).ok());
  std::vector<std::string> live, remount;
  for (const config::KeySpec& key : ChangedByAllNonDefault(false)) {
    (key.live ? live : remount).emplace_back(key.name);
  }
  EXPECT_EQ(needs_remount, remount);
  EXPECT_EQ(ChangedKeys(before, cache_->options()), live);
  EXPECT_EQ(RemountKeys(before, AllNonDefault()), remount);
  EXPECT_EQ(WithLiveKeys(before, AllNonDefault()), cache_->options());
}

}  // namespace
}  // namespace ccfs
