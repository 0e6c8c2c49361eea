// libFuzzer target: the trace readers (ccfs CSV, fio iolog v2/v3, MSR Cambridge, VSCSI CSV,
// auto-detect).
//
// Input layout: the first byte picks the format ('A' auto, 'B' ccfs, 'C' fio2, 'D' fio3, 'E' msr,
// 'F' vscsi, counting on modulo 6), the rest is the trace text. Properties checked
// beyond "no crash, no sanitizer report": a refused trace returns no records and names the source;
// every accepted record addresses a file of the data set, an offset inside it and a length in
// [1, kMaxTraceLength]; a ccfs CSV written back from the records parses to the same records.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "trace/dataset.h"
#include "trace/trace_file.h"

namespace {

void Check(bool cond) {
  if (!cond) abort();
}

const ccfs::Dataset& TheDataset() {
  static const ccfs::Dataset dataset = ccfs::Dataset::FromFiles(
      "/data/set", 8192,
      {{"a.txt", 100000}, {"dir/b.bin", 16384}, {"c,d.db", 8192}, {"q\"uote", 1}});
  return dataset;
}

constexpr ccfs::TraceFormat kFormats[] = {ccfs::TraceFormat::kAuto, ccfs::TraceFormat::kCcfsCsv,
                                          ccfs::TraceFormat::kFioV2, ccfs::TraceFormat::kFioV3,
                                          ccfs::TraceFormat::kMsr, ccfs::TraceFormat::kVscsi};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ccfs::TraceFormat format =
      kFormats[static_cast<uint8_t>(data[0] - 'A') % std::size(kFormats)];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const ccfs::Dataset& dataset = TheDataset();
  std::vector<ccfs::TraceRecord> records;
  ccfs::Status s = ccfs::ParseTrace(text, "fuzz.trace", dataset, format, &records);
  if (!s.ok()) {
    Check(records.empty());
    Check(s.message().find("fuzz.trace") != std::string::npos);
    return 0;
  }
  std::string csv = "file,offset,length,op\n";
  for (const ccfs::TraceRecord& r : records) {
    Check(r.file < dataset.files().size());
    Check(r.offset < dataset.files()[r.file].size);
    Check(r.length >= 1 && r.length <= ccfs::kMaxTraceLength);
    Check(r.op == ccfs::TraceOp::kRead || r.op == ccfs::TraceOp::kWrite);
    csv += ccfs::FormatTraceRecord(dataset, r);
    csv += '\n';
  }
  std::vector<ccfs::TraceRecord> again;
  Check(ccfs::ParseTrace(csv, "rewritten", dataset, ccfs::TraceFormat::kCcfsCsv, &again).ok());
  Check(again.size() == records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    Check(again[i].file == records[i].file && again[i].offset == records[i].offset &&
          again[i].length == records[i].length && again[i].op == records[i].op);
  }
  return 0;
}
