// CacheFile: the file a mount's cached pages are kept in across a restart (persist = DIR), and
// the checks that decide whether one may be used at all.
//
// 1. Layout. Integers are little-endian whatever the host. A 64-byte header, then records:
//      header  magic "CCFSPAGE", u32 version (kCacheFileVersion), u32 page_size, u32 codecs (bit
//              k: pages compressed with CodecKind k follow), u32 0, u64 dataset id (the mount's
//              DATASET, CacheFileDatasetId), i64 written (Unix seconds), 16 bytes of 0, u64
//              XXH3-64 of the 56 bytes before it
//      record  u32 type, u32 payload length, the payload, u64 XXH3-64 of type, length and payload
//    The records, in this order: a file record, then that file's page records, then the next file
//    record ...; last an end record, and nothing after it.
//      file    u64 file id, u64 size, i64 mtime ns, i64 ctime ns (the signature ccfs had recorded
//              for the file, fuse/change_detector.h), then its path relative to DATASET
//      page    u64 page number, u32 length (the page's bytes), u8 codec (a CodecKind, or
//              kZeroPage: all zero, no bytes follow), then the compressed bytes
//      end     u64 files, u64 pages: the records before it
// 2. Trust. A record is used only once it checks: the header's fields, the record's checksum,
//    type, lengths and order; at the end, the end record's counts (a truncated file has no end
//    record). A reader that meets damage part way drops what it took from the file
//    (fuse/persister.h); VerifyCacheFile checks a whole file. Paths are relative, with no
//    "." or ".." component, so a stat of one stays inside DATASET (symlinks aside, which the caller
//    does not follow). A page's bytes are checked by their checksum only: they are decompressed
//    when read, and a blob that does not decode is dropped then and read from the store
//    (page_cache.cc, ReadCompressed).
// 3. Writing. CacheFileWriter writes a temporary file beside the cache file, fsyncs it, renames it
//    over the cache file and fsyncs the directory, so the name holds either the previous file or
//    the new one, whole, whatever happens meanwhile (a crash, a kill -9, a full disk: then the
//    temporary file is removed and the previous file stays).
//
// Thread-safety: a reader or writer is used by one thread at a time.
#ifndef CCFS_CACHE_CACHE_FILE_H_
#define CCFS_CACHE_CACHE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ccfs/status.h"

namespace ccfs::cache {

inline constexpr uint32_t kCacheFileVersion = 1;
// The codec byte of an all-zero page (no bytes follow).
inline constexpr uint8_t kZeroPage = 0xFF;
// The longest path a file record may carry (PATH_MAX).
inline constexpr uint32_t kMaxCachePath = 4096;

// The id of a DATASET (its absolute path) in a cache file's header: a file written for another
// dataset is foreign.
uint64_t CacheFileDatasetId(const std::string& dataset);

// A file record: the file's id and signature when its pages were written, and a path to it.
struct CachedFileRecord {
  uint64_t file_id = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  std::string path;  // relative to DATASET
};

// A page record. `bytes` is compressed with `codec` (empty for kZeroPage); it points into the
// reader's buffer, valid until its next call.
struct CachedPageRecord {
  uint64_t page_no = 0;
  uint32_t length = 0;
  uint8_t codec = 0;
  std::string_view bytes;
};

// Reads a cache file from `fd` (from offset 0, with pread), record by record.
class CacheFileReader {
 public:
  // `page_size` and `dataset_id`: what the mount expects; a header with others is refused.
  CacheFileReader(int fd, uint32_t page_size, uint64_t dataset_id);

  // Checks the header. The message of an error says what is wrong ("truncated header", "version
  // 7, this ccfs reads 1", "written for another dataset", ...).
  Status ReadHeader();

  enum class Kind { kFile, kPage, kEnd };
  // Reads the next record into *kind and file() or page(). After kEnd it checks that nothing
  // follows (kEnd again). An error names the byte offset of the record at fault.
  Status Next(Kind* kind);
  const CachedFileRecord& file() const { return file_; }
  const CachedPageRecord& page() const { return page_; }
  // The codecs the header says the pages use (bit k: CodecKind k).
  uint32_t codecs() const { return codecs_; }
  int64_t written() const { return written_; }

 private:
  // Makes `n` bytes from offset_ readable at buf_[pos_]; false at end of file (*error when a read
  // failed).
  bool Fill(size_t n, Status* error);
  Status Damaged(const std::string& what) const;

  const int fd_;
  const uint32_t page_size_;
  const uint64_t dataset_id_;
  uint32_t codecs_ = 0;
  int64_t written_ = 0;
  std::vector<char> buf_;
  size_t pos_ = 0;          // next unread byte of buf_
  size_t end_ = 0;          // bytes of buf_ holding file data
  uint64_t offset_ = 0;     // file offset of buf_[pos_]
  uint64_t dropped_ = 0;    // bytes before it were dropped from the page cache
  uint64_t record_at_ = 0;  // file offset of the record being read
  uint64_t files_ = 0, pages_ = 0;
  bool ended_ = false;
  CachedFileRecord file_;
  CachedPageRecord page_;
};

// What a whole file holds once it checked.
struct CacheFileSummary {
  uint64_t files = 0;
  uint64_t pages = 0;
  uint64_t page_bytes = 0;  // the pages' compressed bytes
  int64_t written = 0;      // Unix seconds
};

// Reads the whole file, header to end record, checking everything section 2 lists.
Status VerifyCacheFile(int fd, uint32_t page_size, uint64_t dataset_id,
                       CacheFileSummary* summary);

// Writes a cache file DIR/NAME by way of a temporary file DIR/NAME.tmp-PID (section 3).
class CacheFileWriter {
 public:
  // Creates the temporary file. Errors name it.
  static Status Create(const std::string& dir, const std::string& name, uint32_t page_size,
                       uint64_t dataset_id, std::unique_ptr<CacheFileWriter>* writer);
  // Removes the temporary file unless Commit succeeded.
  ~CacheFileWriter();
  CacheFileWriter(const CacheFileWriter&) = delete;
  CacheFileWriter& operator=(const CacheFileWriter&) = delete;

  // REQUIRES: file.path is relative, has no "." or ".." component and is at most kMaxCachePath
  // bytes (the reader refuses others).
  Status AddFile(const CachedFileRecord& file);
  // A page of the last file added. `codec` is a CodecKind or kZeroPage (then `size` is 0).
  Status AddPage(uint64_t page_no, uint32_t length, uint8_t codec, const char* bytes,
                 uint32_t size);
  // Writes the end record and the final header, fsyncs, renames over DIR/NAME and fsyncs DIR.
  Status Commit();

  uint64_t bytes_written() const { return offset_ + buf_.size(); }
  uint64_t pages() const { return pages_; }
  const std::string& temp_path() const { return temp_; }

 private:
  CacheFileWriter(int fd, std::string dir, std::string path, std::string temp,
                  uint32_t page_size, uint64_t dataset_id);
  Status AddRecord(uint32_t type, const std::string& payload);
  Status Flush();

  int fd_;
  const std::string dir_, path_, temp_;
  const uint32_t page_size_;
  const uint64_t dataset_id_;
  uint32_t codecs_ = 0;
  std::string buf_;
  uint64_t offset_ = 0;  // bytes written to fd_ so far
  uint64_t files_ = 0, pages_ = 0;
  bool committed_ = false;
};

// Removes DIR/NAME.tmp-PID files whose process is gone (left by a writer killed mid-write).
void RemoveStaleCacheTemps(const std::string& dir, const std::string& name);

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_CACHE_FILE_H_
