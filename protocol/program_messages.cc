// RUN_PROGRAMS and PROGRAM_RESULTS (protocol.h, docs/worker-protocol.md).
//
//   RUN_PROGRAMS     u8 form, u8 reading, u8 flags (bit 0 until_fault),
//                    u8 reserved (0), u32 time_limit_ms, u32 count, then
//                    count times (u32 length, the case's bytes)
//   PROGRAM_RESULTS  u32 count, then count times (u32 length, the check)

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "protocol/protocol.h"
#include "protocol/wire.h"

namespace ptxdiff {
namespace {

constexpr uint8_t kUntilFaultFlag = 1;

void PutBlobs(std::string& out, const std::vector<std::string>& blobs) {
  PutLe(out, blobs.size(), 4);
  for (const std::string& b : blobs) PutBlob(out, b);
}

// `count` blobs; each needs at least its 4-byte length, so a count the
// payload cannot hold fails before anything is reserved for it.
absl::StatusOr<std::vector<std::string>> ReadBlobs(Reader& r, uint64_t count,
                                                   absl::string_view what) {
  PTXDIFF_RETURN_IF_ERROR(r.ExpectRecords(count, 4, what));
  std::vector<std::string> blobs;
  blobs.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    PTXDIFF_READ(blob, r.Blob(absl::StrCat(what, " ", i)));
    blobs.push_back(std::move(blob));
  }
  return blobs;
}

}  // namespace

uint32_t TimeLimitMs(absl::Time deadline, absl::Time now) {
  if (deadline == absl::InfiniteFuture()) return 0;
  return static_cast<uint32_t>(std::clamp<int64_t>(
      absl::ToInt64Milliseconds(deadline - now), 1, UINT32_MAX));
}

absl::Time DeadlineOf(uint32_t time_limit_ms, absl::Time now) {
  return time_limit_ms == 0 ? absl::InfiniteFuture()
                            : now + absl::Milliseconds(time_limit_ms);
}

std::string EncodeProgramRunRequest(const ProgramRunRequest& request) {
  std::string out;
  PutLe(out, request.form, 1);
  PutLe(out, request.reading, 1);
  PutLe(out, request.until_fault ? kUntilFaultFlag : 0, 1);
  PutLe(out, 0, 1);
  PutLe(out, request.time_limit_ms, 4);
  PutBlobs(out, request.programs);
  return out;
}

absl::StatusOr<ProgramRunRequest> DecodeProgramRunRequest(
    absl::string_view payload) {
  Reader r(payload);
  ProgramRunRequest request;
  PTXDIFF_READ(form, r.Le(1, "form"));
  PTXDIFF_READ(reading, r.Le(1, "reading"));
  PTXDIFF_READ(flags, r.Le(1, "flags"));
  PTXDIFF_READ(reserved, r.Le(1, "reserved byte"));
  PTXDIFF_READ(time_limit, r.Le(4, "time limit"));
  PTXDIFF_READ(count, r.Le(4, "program count"));
  if (form > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input form ", form, ": 0 (runtime) or 1 (immediate)"));
  }
  if (reading > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("reading ", reading, ": 0 (spec) or 1 (hardware)"));
  }
  if ((flags & ~kUntilFaultFlag) != 0 || reserved != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flags 0x", absl::Hex(flags), " or reserved byte ",
                     reserved, " (both must be 0 but for bit 0 of the flags)"));
  }
  if (count == 0 || count > kMaxProgramsPerBatch) {
    return absl::InvalidArgumentError(absl::StrCat(
        count, " programs in a batch; 1 to ", kMaxProgramsPerBatch));
  }
  request.form = static_cast<uint8_t>(form);
  request.reading = static_cast<uint8_t>(reading);
  request.until_fault = (flags & kUntilFaultFlag) != 0;
  request.time_limit_ms = static_cast<uint32_t>(time_limit);
  PTXDIFF_ASSIGN_OR_RETURN(request.programs, ReadBlobs(r, count, "program"));
  PTXDIFF_RETURN_IF_ERROR(r.ExpectEnd());
  return request;
}

std::string EncodeProgramRunReply(const ProgramRunReply& reply) {
  std::string out;
  PutBlobs(out, reply.checks);
  return out;
}

absl::StatusOr<ProgramRunReply> DecodeProgramRunReply(
    absl::string_view payload, size_t expected_programs) {
  Reader r(payload);
  PTXDIFF_READ(count, r.Le(4, "check count"));
  if (count != expected_programs) {
    return absl::InvalidArgumentError(absl::StrCat(
        count, " checks for a batch of ", expected_programs, " programs"));
  }
  ProgramRunReply reply;
  PTXDIFF_ASSIGN_OR_RETURN(reply.checks, ReadBlobs(r, count, "check"));
  PTXDIFF_RETURN_IF_ERROR(r.ExpectEnd());
  return reply;
}

}  // namespace ptxdiff
