// The literal oracle: a line-by-line transcription of the specification's
// pseudocode, kept as a second, independent opinion on what each instruction
// variant computes.
//
// LiteralEvaluate() returns the same Result as Evaluate() in oracle/oracle.h
// (the destination's bits, zero-extended from ResultWidth(v), and why the spec
// leaves them undefined, if it does), and the tests require the two to agree on
// every tuple. The difference is in how the result is reached:
//
//   - Evaluate() is the fast oracle: it uses whatever closed form, bit trick or
//     batch loop computes the answer quickly.
//   - LiteralEvaluate() is slow on purpose. Each family is a small function
//     that reads like the spec's Semantics block (PTX ISA 9.7.1, 9.7.2,
//     9.7.8.7, 9.7.18.1; Intel vISA SHL), with the pseudocode quoted next to
//     the code. The extended-precision carry and borrow (9.7.2) are computed
//     from the unsigned register values as mathematical integers.
//     The loops are the spec's loops (popc's while loop, clz's while loop,
//     bfind's for loop, fns walking pos, brev/bfe/bfi bit by bit, dp4a/dp2a
//     over the lanes); bits are read and written one at a time through an
//     explicit Bit(x, i) helper; every intermediate is a mathematical integer
//     (__int128) or a 128-bit vector such as vmad's tmp[127:0], so overflow
//     happens only where the spec truncates. The video instructions go
//     through partSelectSignExtend, optSaturate, optSecOp and optMerge, each
//     its own function, exactly as the spec's preamble defines them.
//
// It was written from the spec text and docs/spec-notes.md only, never from
// oracle.cc, so that a misreading in one is caught by the other. Where the
// spec is ambiguous, it implements the decision in docs/spec-notes.md; the
// remaining judgement calls are marked `AMBIGUOUS:` in the .cc file.

#ifndef PTXDIFF_ORACLE_LITERAL_LITERAL_ORACLE_H_
#define PTXDIFF_ORACLE_LITERAL_LITERAL_ORACLE_H_

#include "isa/variant.h"
#include "oracle/oracle.h"

namespace ptxdiff {

// Evaluates one tuple by transcribing the spec's pseudocode. `v` must be legal
// (IsLegal). Only the low SourceWidth(v, i) bits of each source are read, and
// only the first NumSources(v) sources.
inline namespace PTXDIFF_ORACLE_COPY {
Result LiteralEvaluate(const Variant& v, const Operands& operands);
}  // namespace PTXDIFF_ORACLE_COPY

}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_LITERAL_LITERAL_ORACLE_H_
