// The program campaign's pending-journal records (program_campaign.h):
// a finding written whole, so that the next run files what this one could
// not.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "program/program_campaign.h"

namespace ptxdiff {

std::string ProgramJournalRecord(const std::string& identity,
                                 const Program& program, ProgramInputs form,
                                 CaseFault fault) {
  return absl::StrCat(absl::BytesToHexString(identity), " ",
                      form == ProgramInputs::kRuntime ? "runtime" : "immediate",
                      " ",
                      fault == CaseFault::kNone    ? "mismatch"
                      : fault == CaseFault::kCrash ? "crash"
                                                   : "hang",
                      " ", absl::BytesToHexString(FormatProgram(program)));
}

std::optional<PendingProgram> ParseProgramJournalRecord(
    absl::string_view record) {
  const std::vector<absl::string_view> f = absl::StrSplit(record, ' ');
  if (f.size() != 4) return std::nullopt;
  PendingProgram p;
  if (f[1] != "runtime" && f[1] != "immediate") return std::nullopt;
  p.form =
      f[1] == "runtime" ? ProgramInputs::kRuntime : ProgramInputs::kImmediate;
  if (f[2] == "crash") {
    p.fault = CaseFault::kCrash;
  } else if (f[2] == "hang") {
    p.fault = CaseFault::kHang;
  } else if (f[2] != "mismatch") {
    return std::nullopt;
  }
  const auto is_hex = [](absl::string_view s) {
    return s.size() % 2 == 0 &&
           s.find_first_not_of("0123456789abcdefABCDEF") == s.npos;
  };
  if (!is_hex(f[0]) || !is_hex(f[3])) return std::nullopt;
  p.identity = absl::HexStringToBytes(f[0]);
  absl::StatusOr<Program> program = ParseProgram(absl::HexStringToBytes(f[3]));
  if (!program.ok()) return std::nullopt;
  p.program = *std::move(program);
  return p;
}

}  // namespace ptxdiff
