// Trace files: recorded sequences of reads and writes that a replay can repeat exactly.
//
// Readers turn a trace into TraceRecords resolved against a Dataset (file index + byte offset):
//   ccfs CSV   header "file,offset,length,op", then one line per request; file is relative to the
//              data set root (double-quoted, "" for a quote, when it holds a comma or quote); op is
//              read or write. Blank lines and lines starting with '#' are ignored. --record writes
//              this format.
//   fio v2     first line "fio version 2 iolog", then "FILE ACTION" (add/open/close) and
//              "FILE ACTION OFFSET LENGTH" lines (read/write; sync/datasync/trim/wait are skipped).
//   fio v3     first line "fio version 3 iolog", every line prefixed by a timestamp (ms).
//              fio file names are absolute: they are matched to the data set by the longest
//              trailing path that names one of its files.
//   MSR        the MSR Cambridge block traces: Timestamp,Hostname,DiskNumber,Type,Offset,Size,
//              ResponseTime with Type Read or Write. They address a disk, not files, so the offset
//              is folded onto the data set's pages modulo its page count.
//   VSCSI      the CloudPhysics VMware VSCSI block traces as libCacheSim's CSV gives them: header
//              "version,time,op,size,lbn", op the SCSI opcode in hex (28/88/08 read, 2a/8a/0a
//              write; other commands are skipped, as are commands of no bytes), size in bytes,
//              lbn in 512-byte sectors, folded onto the data set as MSR's offsets are.
// A malformed line — wrong field count, a number that is not one, negative, or too large, an
// unknown op or action, an unterminated quote, a file not in the data set, an offset past the end
// of its file — is InvalidArgument "SOURCE:LINE: what is wrong", and no records are returned.
//
// Thread-safety: the readers are pure functions; TraceWriter::Append may be called from many
// threads (it serialises internally).
#ifndef CCFS_TRACE_TRACE_FILE_H_
#define CCFS_TRACE_TRACE_FILE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ccfs/status.h"
#include "trace/dataset.h"
#include "util/mutex.h"

namespace ccfs {

enum class TraceOp : uint8_t { kRead = 0, kWrite = 1 };

struct TraceRecord {
  uint32_t file = 0;    // index into Dataset::files()
  uint64_t offset = 0;  // byte offset within the file, < its size
  uint32_t length = 0;  // bytes, >= 1
  TraceOp op = TraceOp::kRead;
};

enum class TraceFormat { kAuto, kCcfsCsv, kFioV2, kFioV3, kMsr, kVscsi };

// "auto", "ccfs", "fio2", "fio3", "msr", "vscsi".
const char* TraceFormatName(TraceFormat format);
// Every name TraceFormatName gives, as a list for help and errors: "auto, ccfs, ... or vscsi".
std::string TraceFormatChoices();
Status ParseTraceFormat(const std::string& name, TraceFormat* format);

// The largest length one record may ask for.
inline constexpr uint64_t kMaxTraceLength = 1ull << 30;

// Parses `text` (the whole trace). kAuto looks at the first non-blank line: a fio header, the ccfs
// CSV header, the VSCSI CSV header, or else a 7-field MSR line. `source` names the trace in errors.
Status ParseTrace(std::string_view text, const std::string& source, const Dataset& dataset,
                  TraceFormat format, std::vector<TraceRecord>* records);
// Reads the file at `path` and parses it as above.
Status ReadTraceFile(const std::string& path, const Dataset& dataset, TraceFormat format,
                     std::vector<TraceRecord>* records);

// The ccfs CSV line of one record (no newline).
std::string FormatTraceRecord(const Dataset& dataset, const TraceRecord& record);

// Writes a ccfs CSV trace (--record).
class TraceWriter {
 public:
  // Creates or truncates `path` and writes the header. `dataset` must outlive the writer.
  static Status Open(const std::string& path, const Dataset* dataset,
                     std::unique_ptr<TraceWriter>* writer);
  ~TraceWriter();
  Status Append(const TraceRecord& record);
  // Flushes and closes; errors (a full disk) surface here. Called by the destructor if not before.
  Status Close();

 private:
  TraceWriter(std::string path, const Dataset* dataset, FILE* out)
      : path_(std::move(path)), dataset_(dataset), out_(out) {}
  std::string path_;
  const Dataset* dataset_;
  Mutex mu_;
  FILE* out_ GUARDED_BY(mu_);  // null once closed
};

}  // namespace ccfs

#endif  // CCFS_TRACE_TRACE_FILE_H_
