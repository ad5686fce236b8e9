// A ProgramCheck's bytes (little-endian, protocol/wire.h):
//
//   u8 flags: bit 0 judged, 1 nothing_defined, 2 cut, 3 executed,
//             4 a fault follows, 5 a mismatch follows, 6 constants follow,
//             7 refused
//   blob why_not, blob blocker, blob hung_in_module, u32 vectors
//   [constants] vector
//   [fault]    u8 kind (0 crash, 1 hang), blob what
//   [mismatch] u8 form, u8 executed, vector claimed, vector inputs,
//              u32 count then per oracle value u64 bits and u8 (bit 0
//              defined, bit 1 exits), blob listing, blob departure,
//              blob departure_cause
//
// where a vector is u32 count then u64 each.

#include "program/program_wire.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "protocol/wire.h"

namespace ptxdiff {
namespace {

enum CheckFlag : uint8_t {
  kJudged = 1,
  kNothingDefined = 2,
  kCut = 4,
  kExecuted = 8,
  kHasFault = 16,
  kHasMismatch = 32,
  kHasConstants = 64,
  kRefused = 128,
};

void PutWords(std::string& out, const std::vector<uint64_t>& words) {
  PutLe(out, words.size(), 4);
  for (uint64_t w : words) PutLe(out, w, 8);
}

absl::StatusOr<std::vector<uint64_t>> ReadWords(Reader& r,
                                                absl::string_view what) {
  PTXDIFF_READ(count, r.Le(4, what));
  PTXDIFF_RETURN_IF_ERROR(r.ExpectRecords(count, 8, what));
  std::vector<uint64_t> words(count);
  for (uint64_t& w : words) w = LoadLe<uint64_t>(r.Take(8));
  return words;
}

void PutMismatch(std::string& out, const ProgramMismatch& m) {
  PutLe(out, static_cast<uint8_t>(m.form), 1);
  PutLe(out, m.executed ? 1 : 0, 1);
  PutWords(out, m.claimed);
  PutWords(out, m.inputs);
  PutLe(out, m.oracle.size(), 4);
  for (const ProgramValue& v : m.oracle) {
    PutLe(out, v.bits, 8);
    PutLe(out, (v.defined ? 1 : 0) | (v.exits ? 2 : 0), 1);
  }
  PutBlob(out, m.listing);
  PutBlob(out, m.departure);
  PutBlob(out, m.departure_cause);
}

absl::StatusOr<ProgramMismatch> ReadMismatch(Reader& r) {
  ProgramMismatch m;
  PTXDIFF_READ(form, r.Le(1, "mismatch form"));
  PTXDIFF_READ(executed, r.Le(1, "mismatch executed"));
  if (form > 1 || executed > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mismatch form ", form, " or executed ", executed, ": 0 or 1"));
  }
  m.form = static_cast<ProgramInputs>(form);
  m.executed = executed == 1;
  PTXDIFF_ASSIGN_OR_RETURN(m.claimed, ReadWords(r, "claimed outputs"));
  PTXDIFF_ASSIGN_OR_RETURN(m.inputs, ReadWords(r, "mismatch inputs"));
  PTXDIFF_READ(count, r.Le(4, "oracle outputs"));
  PTXDIFF_RETURN_IF_ERROR(r.ExpectRecords(count, 9, "oracle outputs"));
  m.oracle.resize(count);
  for (ProgramValue& v : m.oracle) {
    const char* p = r.Take(9);
    v.bits = LoadLe<uint64_t>(p);
    const uint8_t bits = static_cast<uint8_t>(p[8]);
    if (bits > 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("oracle output flags ", bits, ": bits 0 and 1 only"));
    }
    v.defined = (bits & 1) != 0;
    v.exits = (bits & 2) != 0;
  }
  PTXDIFF_ASSIGN_OR_RETURN(m.listing, r.Blob("listing"));
  PTXDIFF_ASSIGN_OR_RETURN(m.departure, r.Blob("departure"));
  PTXDIFF_ASSIGN_OR_RETURN(m.departure_cause, r.Blob("departure cause"));
  return m;
}

}  // namespace

ProgramRunRequest ProgramRequestOf(std::span<const Program> programs,
                                   ProgramInputs form, Reading reading,
                                   bool until_fault, absl::Time deadline,
                                   absl::Time now) {
  ProgramRunRequest request{.form = static_cast<uint8_t>(form),
                            .reading = static_cast<uint8_t>(reading),
                            .until_fault = until_fault,
                            .time_limit_ms = TimeLimitMs(deadline, now)};
  request.programs.reserve(programs.size());
  for (const Program& p : programs)
    request.programs.push_back(FormatProgram(p));
  return request;
}

absl::StatusOr<ProgramBatch> ProgramBatchOf(const ProgramRunRequest& request,
                                            absl::Time now) {
  ProgramBatch batch{.form = static_cast<ProgramInputs>(request.form),
                     .reading = static_cast<Reading>(request.reading),
                     .until_fault = request.until_fault,
                     .deadline = DeadlineOf(request.time_limit_ms, now)};
  batch.programs.reserve(request.programs.size());
  for (size_t i = 0; i < request.programs.size(); ++i) {
    absl::StatusOr<Program> p = ParseProgram(request.programs[i]);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("program ", i,
                       " of the batch does not parse: ", p.status().message()));
    }
    batch.programs.push_back(*std::move(p));
  }
  return batch;
}

std::string EncodeProgramCheck(const ProgramCheck& c) {
  std::string out;
  const uint8_t flags =
      (c.judged ? kJudged : 0) | (c.nothing_defined ? kNothingDefined : 0) |
      (c.cut ? kCut : 0) | (c.executed ? kExecuted : 0) |
      (c.fault ? kHasFault : 0) | (c.mismatch ? kHasMismatch : 0) |
      (c.constants ? kHasConstants : 0) | (c.refused ? kRefused : 0);
  PutLe(out, flags, 1);
  PutBlob(out, c.why_not);
  PutBlob(out, c.blocker);
  PutBlob(out, c.hung_in_module);
  PutLe(out, static_cast<uint32_t>(c.vectors), 4);
  if (c.constants) PutWords(out, *c.constants);
  if (c.fault) {
    PutLe(out, c.fault->kind == CaseFault::kCrash ? 0 : 1, 1);
    PutBlob(out, c.fault->what);
  }
  if (c.mismatch) PutMismatch(out, *c.mismatch);
  return out;
}

absl::StatusOr<ProgramCheck> DecodeProgramCheck(absl::string_view bytes) {
  Reader r(bytes);
  ProgramCheck c;
  // Every bit of the byte is a flag: none is unknown.
  PTXDIFF_READ(flags, r.Le(1, "check flags"));
  c.judged = (flags & kJudged) != 0;
  c.nothing_defined = (flags & kNothingDefined) != 0;
  c.cut = (flags & kCut) != 0;
  c.executed = (flags & kExecuted) != 0;
  c.refused = (flags & kRefused) != 0;
  PTXDIFF_ASSIGN_OR_RETURN(c.why_not, r.Blob("why not"));
  PTXDIFF_ASSIGN_OR_RETURN(c.blocker, r.Blob("blocker"));
  PTXDIFF_ASSIGN_OR_RETURN(c.hung_in_module, r.Blob("hung in module"));
  PTXDIFF_READ(vectors, r.Le(4, "input vectors"));
  if (vectors > (1u << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat(vectors, " input vectors: at most 2^30"));
  }
  c.vectors = static_cast<int>(vectors);
  if (flags & kHasConstants) {
    PTXDIFF_ASSIGN_OR_RETURN(c.constants, ReadWords(r, "constants"));
  }
  if (flags & kHasFault) {
    PTXDIFF_READ(kind, r.Le(1, "fault kind"));
    if (kind > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("fault kind ", kind, ": 0 (crash) or 1 (hang)"));
    }
    PTXDIFF_ASSIGN_OR_RETURN(std::string what, r.Blob("fault"));
    c.fault =
        ProgramFault{.kind = kind == 0 ? CaseFault::kCrash : CaseFault::kHang,
                     .what = std::move(what)};
  }
  if (flags & kHasMismatch) {
    PTXDIFF_ASSIGN_OR_RETURN(c.mismatch, ReadMismatch(r));
  }
  PTXDIFF_RETURN_IF_ERROR(r.ExpectEnd());
  return c;
}

}  // namespace ptxdiff
