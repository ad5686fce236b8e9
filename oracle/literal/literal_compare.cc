// The literal oracle, comparison and selection (PTX ISA 9.7.6) and integer cvt
// (9.7.9.21). See literal_oracle.h for why it exists and docs/spec-notes.md for
// every decision on an ambiguity. Quoted lines ("...") are the spec's own text.

#include <cstdint>

#include "isa/axes.h"
#include "isa/family_table.h"
#include "isa/variant.h"
#include "oracle/literal/literal_common.h"
#include "oracle/literal/literal_sections.h"
#include "oracle/oracle.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace literal {
namespace {

// ---------------------------------------------------------------------------
// Comparison and selection (PTX ISA 9.7.6.1-9.7.6.4) and integer-to-integer
// cvt (9.7.9.21). set and setp with and without `.BoolOp` (set with integer
// sources only), setp's first destination
// p only (no `p|q`); slct with an `.s32` c; cvt without rounding modifiers
// (spec-notes).
// ---------------------------------------------------------------------------

// 9.7.6.2 setp: "Compare two numeric values with a relational operator, and
// (optionally) combine this result with a predicate value by applying a
// Boolean operator". "Operands a and b have type .type", so they are read as
// the type says: signed for .s16/.s32/.s64, unsigned for .u16/.u32/.u64 and
// (as bits) for .b16/.b32/.b64, whose only comparisons are eq and ne ("The
// untyped, bit-size comparisons are eq and ne").
// The combine forms are "setp.CmpOp.BoolOp.type p[|q], a, b, {!}c;" with
// ".BoolOp = { and, or, xor }". A tuple has one result, p: the second
// destination q ("A related value computed using the complement of the
// compare result is written to the second destination operand", "q =
// BoolOp(!t, c);") is not modelled, and `!c` is no variant of its own (it is
// c complemented, and c takes both values anyway).

// setp's p (and set's BoolOp(t, c)): a and b read as `compared`, setp's
// `.type` or set's `.stype`.
Integer ComparePredicate(const Variant& v, const Operands& ops, Type compared) {
  const Integer a = Operand(v, ops, 0, IsSigned(compared));
  const Integer b = Operand(v, ops, 1, IsSigned(compared));
  // 9.3.1.1 Table 22: lo, ls, hi, hs are the "Unsigned Operator" column
  // (lower, lower-or-same, higher, higher-or-same): a and b as unsigned
  // numbers, whatever the type.
  const Integer ua = Operand(v, ops, 0, /*is_signed=*/false);
  const Integer ub = Operand(v, ops, 1, /*is_signed=*/false);
  // "t = (a CmpOp b) ? 1 : 0;"
  bool compare = false;
  switch (v.cmp) {
    case Cmp::kEq:  // "a == b"
      compare = a == b;
      break;
    case Cmp::kNe:  // "a != b"
      compare = a != b;
      break;
    // "For unsigned values, the comparison operators lo, ls, hi, and hs [...]
    //  may be used instead of lt, le, gt, ge": on a .u type lt..ge compare
    //  the unsigned values, as Typed() reads them.
    case Cmp::kLt:  // "a < b"
      compare = a < b;
      break;
    case Cmp::kLe:  // "a <= b"
      compare = a <= b;
      break;
    case Cmp::kGt:  // "a > b"
      compare = a > b;
      break;
    case Cmp::kGe:  // "a >= b"
      compare = a >= b;
      break;
    case Cmp::kLo:  // lower: "a < b"
      compare = ua < ub;
      break;
    case Cmp::kLs:  // lower-or-same: "a <= b"
      compare = ua <= ub;
      break;
    case Cmp::kHi:  // higher: "a > b"
      compare = ua > ub;
      break;
    case Cmp::kHs:  // higher-or-same: "a >= b"
      compare = ua >= ub;
      break;
    case Cmp::kNone:
      break;
  }
  const Integer t = compare ? 1 : 0;
  // "p = BoolOp(t, c);" with no BoolOp (and no c): p = t.
  if (v.bool_op == BoolOp::kNone) return t;
  // With a BoolOp, c is source 2 ("operands p, q, and c have type .pred"): a
  // predicate, one bit (SourceWidth(v, 2) is 1), 1 True and 0 False.
  const Integer c = Operand(v, ops, 2, /*is_signed=*/false);
  // "p = BoolOp(t, c);" The spec names the operators and does not spell them
  // out; each is read as the instruction of that name on predicates (9.7.8.1
  // and, 9.7.8.2 or, 9.7.8.3 xor: "Allowed types include predicate
  // registers"), applied to the two one-bit values t and c.
  Integer p = 0;
  switch (v.bool_op) {
    case BoolOp::kAnd:  // "d = a & b;": True when t and c are both True
      p = (t == 1 && c == 1) ? 1 : 0;
      break;
    case BoolOp::kOr:  // "d = a | b;": True when t or c (or both) is True
      p = (t == 1 || c == 1) ? 1 : 0;
      break;
    case BoolOp::kXor:  // "d = a ^ b;": True when exactly one of t, c is True
      p = (t != c) ? 1 : 0;
      break;
    case BoolOp::kNone:
      break;
  }
  return p;
}

}  // namespace

Result Setp(const Variant& v, const Operands& ops) {
  // "This result is written to the first destination operand": p, 1 bit.
  return Defined(v, ComparePredicate(v, ops, v.type));
}

// 9.7.6.1 set: "Compares two numeric values and optionally combines the
// result with another predicate value by applying a Boolean operator. If this
// result is True, 1.0f is written for floating-point destination types, and
// 0xffffffff is written for integer destination types. Otherwise, 0x00000000
// is written." "Operand d has type .dtype; operands a and b have type .stype;
// operand c has type .pred." Here .dtype is the variant's type and .stype its
// atype; the comparison and BoolOp read as setp's (9.7.6.2), whose semantics
// block set's repeats: "t = (a CmpOp b) ? 1 : 0;".
Result Set(const Variant& v, const Operands& ops) {
  const bool result = ComparePredicate(v, ops, v.atype) == 1;
  // "if (isFloat(dtype)) d = BoolOp(t, c) ? 1.0f : 0x00000000; else
  //  d = BoolOp(t, c) ? 0xffffffff : 0x00000000;" 1.0f as IEEE 754 binary32:
  //  sign 0, biased exponent 127, fraction 0.
  const Integer one_f32 = Integer{127} << 23;
  if (!result) return Defined(v, 0);
  return Defined(v, v.type == Type::kF32 ? one_f32 : Integer{0xffffffff});
}



// 9.7.6.3 selp: "If c is True, a is stored in d, b otherwise. [...] Operand c
// is a predicate."
Result Selp(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const Integer c = Operand(v, ops, 2, /*is_signed=*/false);  // one bit
  // "d = (c == 1) ? a : b;"
  return Defined(v, UnsignedValue(c == 1 ? a : b, TypeWidth(v.type)));
}

// 9.7.6.4 slct: "Select one source operand, based on the sign of the third
// operand." "Operands d, a, and b are treated as a bitsize type of the same
// width as the first instruction type; operand c must match the second
// instruction type (.s32 or .f32). The selected input is copied to the output
// without modification."
Result Slct(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const Integer c = Operand(v, ops, 2, IsSigned(v.atype));  // atype is .s32
  // "d = (c >= 0) ? a : b;"
  return Defined(v, UnsignedValue((c >= 0) ? a : b, TypeWidth(v.type)));
}

namespace {

// What cvt does to an integer of one type to give another, PTX ISA 6.5.1
// Table 15 ("Convert Instruction Precision and Format"): "sext = sign-extend;
// zext = zero-extend; chop = keep only low bits that fit"; "–" on the diagonal
// and between a signed and an unsigned type of the same size, whose bits the
// table leaves as they are.
enum class Conversion { kSame, kSext, kZext, kChop };

// Table 15's integer rows and columns, in its own order (s8 s16 s32 s64 u8
// u16 u32 u64), rows the source format, columns the destination format.
constexpr Conversion kTable15[8][8] = {
    // clang-format off
    //        s8      s16     s32     s64     u8      u16     u32     u64
    /* s8  */ {Conversion::kSame, Conversion::kSext, Conversion::kSext, Conversion::kSext,
               Conversion::kSame, Conversion::kSext, Conversion::kSext, Conversion::kSext},
    /* s16 */ {Conversion::kChop, Conversion::kSame, Conversion::kSext, Conversion::kSext,
               Conversion::kChop, Conversion::kSame, Conversion::kSext, Conversion::kSext},
    /* s32 */ {Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kSext,
               Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kSext},
    /* s64 */ {Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame,
               Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame},
    /* u8  */ {Conversion::kSame, Conversion::kZext, Conversion::kZext, Conversion::kZext,
               Conversion::kSame, Conversion::kZext, Conversion::kZext, Conversion::kZext},
    /* u16 */ {Conversion::kChop, Conversion::kSame, Conversion::kZext, Conversion::kZext,
               Conversion::kChop, Conversion::kSame, Conversion::kZext, Conversion::kZext},
    /* u32 */ {Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kZext,
               Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kZext},
    /* u64 */ {Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame,
               Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame},
    // clang-format on
};

// A type's row or column in Table 15.
int Table15Index(Type type) {
  switch (type) {
    case Type::kS8:
      return 0;
    case Type::kS16:
      return 1;
    case Type::kS32:
      return 2;
    case Type::kS64:
      return 3;
    case Type::kU8:
      return 4;
    case Type::kU16:
      return 5;
    case Type::kU32:
      return 6;
    default:  // kU64 (cvt's integer types are these eight)
      return 7;
  }
}

// 9.7.9.21 cvt, integer to integer: "Convert a value from one type to
// another." "d = convert(a);"
}  // namespace

Result Cvt(const Variant& v, const Operands& ops) {
  const int source_width = TypeWidth(v.atype);
  const int dest_width = TypeWidth(v.type);
  // "A source register wider than the specified type may be used [...]. The
  // lower n bits corresponding to the instruction-type width are used in the
  // conversion."
  const uint64_t a = Raw(v, ops, 0);
  if (v.sat) {
    // ".sat: For integer destination types, .sat limits the result to
    //  MININT..MAXINT for the size of the operation. Note that saturation
    //  applies to both signed and unsigned integer types."
    // spec-notes: the "result" limited is a's value (read as atype says),
    // the "size of the operation" is dtype's, and the limited value fits
    // dtype, so nothing is chopped afterwards.
    const bool dest_signed = IsSigned(v.type);
    const Integer value = Value(a, source_width, IsSigned(v.atype));
    return Defined(v, Clamp(value, MaxOf(dest_width, dest_signed),
                            MinOf(dest_width, dest_signed)));
  }
  Bits128 d = 0;
  switch (kTable15[Table15Index(v.atype)][Table15Index(v.type)]) {
    case Conversion::kSame:  // same size: the bits as they are
    case Conversion::kZext:  // zero-extend: a's bits, zeros above
      for (int i = 0; i < source_width; ++i) d = WithBit(d, i, Bit(a, i));
      break;
    case Conversion::kSext:  // sign-extend: a's bits, a's msb above
      for (int i = 0; i < dest_width; ++i) {
        d = WithBit(d, i, Bit(a, i < source_width ? i : source_width - 1));
      }
      break;
    case Conversion::kChop:  // "keep only low bits that fit"
      for (int i = 0; i < dest_width; ++i) d = WithBit(d, i, Bit(a, i));
      break;
  }
  // Table 15's footnote 1 ("If the destination register is wider than the
  // destination format, the result is extended to the destination register
  // width after chopping") concerns the register, not the dtype-wide result
  // returned here (spec-notes).
  return Defined(v, UnsignedValue(d, dest_width));
}

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
