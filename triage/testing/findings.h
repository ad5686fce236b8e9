// Findings for tests: an unisolated fault (Finding::unisolated), shared by
// the tests of its entry name, its case, its filing and its replay; a plain
// value mismatch, a crash and a program's mismatch, for tests that need an
// entry to show.

#ifndef PTXDIFF_TRIAGE_TESTING_FINDINGS_H_
#define PTXDIFF_TRIAGE_TESTING_FINDINGS_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "triage/finding.h"

namespace ptxdiff {

// A hang of a batch of three tuples that isolation did not narrow: the
// batch's first is add.cc.s32's (not known to be at fault), then two of
// add.sat.s32, the first at a = MAX. No detail: each test says why.
inline Finding AnUnisolatedHangOfABatch() {
  const Variant add = *ParseVariant("add.cc.s32"),
                sat = *ParseVariant("add.sat.s32");
  Finding f;
  f.kind = FindingKind::kHang;
  f.unisolated = true;
  f.tuple = {add, {{7, 8}}};
  f.batch = {f.tuple, {sat, {{0x7fffffff, 1}}}, {sat, {{5, 6}}}};
  f.oracle = Evaluate(add, f.tuple.operands);
  f.backend = "faulty";
  f.backend_identity = "faulty 1";
  return f;
}

// `spelling` on operands {a, b}, the backend's value the oracle's with its
// lowest bit flipped, found by `identity` (WorkerIdentity::Describe()).
inline Finding AValueMismatch(const char* spelling, uint64_t a, uint64_t b,
                              const std::string& identity = "faulty 1") {
  Finding f;
  f.tuple = {*ParseVariant(spelling), {{a, b, 0, 0}}};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend_bits = f.oracle.bits ^ 1;
  f.backend = "faulty";
  f.backend_identity = identity;
  return f;
}

// A crash of div.u32 by zero on a tool (SIGFPE), its output ending with
// the line `last_output`.
inline Finding ACrashWithOutput(const std::string& last_output) {
  Finding f = AValueMismatch("div.u32", 7, 0);
  f.kind = FindingKind::kCrash;
  f.backend_bits.reset();
  f.detail = absl::StrCat(
      "ptx-cmd: command 't' failed on div.u32 (1 tuple): killed by signal 8 "
      "(SIGFPE); its output ends:\n",
      last_output);
  return f;
}

// A program's value mismatch (an immediate fold of `add.u32 %r, %a, 2`),
// by "faulty 1".
inline Finding AProgramMismatch() {
  Finding f = AValueMismatch("add.u32", 1, 2);
  f.program = Finding::ProgramCase{
      .name = "program-1f2e3d4c",
      .form = "immediate-fold",
      .case_text = "# ptxdiff program 1\ninput %a .b32 1\n"
                   "add.u32 %r, %a, 2;\noutput %r\n",
      .shape = "add.u32"};
  return f;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_TRIAGE_TESTING_FINDINGS_H_
