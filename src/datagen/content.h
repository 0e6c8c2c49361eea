// Content sources of `ccfs mkdata` (datagen/mkdata.h): one per kind of data, each a stream of one
// file's bytes. Internal to the data generator; the driver (mkdata.cc) plans the files and runs
// the sources on its writer threads.
//
// Every source except binary is a pure function of its stream seed (StreamSeed of the data set's
// seed, the kind and the file number): a file's bytes do not depend on which thread wrote it. The
// binary source copies pieces of this machine's executables and libraries, planned for all files
// in one sequential pass (PlanBinaries) so parallel writers get what a single writer would.
//
// Thread-safety: a source is used by one thread; different sources may run concurrently.
#ifndef CCFS_DATAGEN_CONTENT_H_
#define CCFS_DATAGEN_CONTENT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datagen/mkdata.h"

namespace ccfs {

// The database kind's page size; every file size is a multiple of it.
inline constexpr uint64_t kDbPage = 8192;

// Per-(seed, kind, file) streams, so a file's bytes do not depend on which thread wrote it.
uint64_t StreamSeed(uint64_t seed, DataKind kind, uint64_t file);

// A source of one file's bytes, filled in order, a chunk at a time.
class ContentSource {
 public:
  virtual ~ContentSource() = default;
  virtual void Fill(char* buf, size_t n) = 0;
};

// A piece of a machine binary making up part of a binary-kind file.
struct BinarySegment {
  std::string path;  // empty: synthetic code
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Plans which pieces of which machine binaries make up each binary-kind file (sizes in order).
// *source says where the bytes come from, for the report.
std::vector<std::vector<BinarySegment>> PlanBinaries(uint64_t seed,
                                                     const std::vector<uint64_t>& file_sizes,
                                                     std::string* source);

// The source of file number `index` of `kind`. binary_plan: that file's piece of PlanBinaries
// (binary kind only).
std::unique_ptr<ContentSource> NewContentSource(uint64_t seed, DataKind kind, uint64_t index,
                                                std::vector<BinarySegment> binary_plan);
// The binary kind's source (binary_content.cc).
std::unique_ptr<ContentSource> NewBinarySource(uint64_t stream_seed,
                                               std::vector<BinarySegment> plan);

}  // namespace ccfs

#endif  // CCFS_DATAGEN_CONTENT_H_
