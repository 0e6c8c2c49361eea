// libFuzzer target: the .ccfs/control line parser (ControlDir::ApplyControlText), over a real
// PageCache so accepted settings are really applied (Reconfigure).
//
// Properties checked beyond "no crash, no sanitizer report": a refused write changes no setting
// (every line is checked before any is applied), and its message names the control file; an
// accepted write leaves options that Validate() accepts and that differ from the previous ones only
// in live keys.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "ccfs/config.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"
#include "fuse/control_dir.h"
#include "fuse/filesystem.h"
#include "config/live_options.h"

namespace {

void Check(bool cond) {
  if (!cond) abort();
}

struct World {
  std::unique_ptr<ccfs::PageCache> cache;
  std::unique_ptr<ccfs::Filesystem> fs;
};

World* GetWorld() {
  static World* world = [] {
    auto* w = new World;
    ccfs::Options o;
    o.memory = 4 << 20;
    o.compress_threads = 1;
    Check(ccfs::PageCache::Create(o, &w->cache).ok());
    ccfs::Filesystem::Config config;
    config.dataset = "/";  // only opened as a directory descriptor; nothing is served
    config.mountpoint = "/nonexistent";
    Check(ccfs::Filesystem::Create(config, w->cache.get(), &w->fs).ok());
    return w;
  }();
  return world;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World* w = GetWorld();
  const ccfs::Options before = w->cache->options();
  std::string text(reinterpret_cast<const char*>(data), size);
  ccfs::Status s = w->fs->control().ApplyControlText(text);
  const ccfs::Options after = w->cache->options();
  if (!s.ok()) {
    Check(after == before);
    Check(s.message().find(".ccfs/control") != std::string::npos);
    return 0;
  }
  Check(after.Validate().ok());
  for (const std::string& key : ccfs::ChangedKeys(before, after)) Check(ccfs::IsLiveKey(key));
  return 0;
}
