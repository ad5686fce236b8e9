// The one-thread SASS machine's operations (sass_machine_internal.h): what
// each instruction Step dispatches does to the registers, predicates and
// memory.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sass/sass_machine_internal.h"

namespace ptxdiff {
namespace sass_machine_internal {

uint32_t Lut3(uint32_t lut, uint32_t a, uint32_t b, uint32_t c) {
  uint32_t out = 0;
  for (int i = 0; i < 8; ++i) {
    if ((lut >> i) & 1) {
      out |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
    }
  }
  return out;
}

namespace {

bool Compare(SassCompare c, uint32_t a, uint32_t b, bool is_signed) {
  const int64_t x = is_signed ? int64_t{static_cast<int32_t>(a)} : int64_t{a};
  const int64_t y = is_signed ? int64_t{static_cast<int32_t>(b)} : int64_t{b};
  switch (c) {
    case SassCompare::kF:
      return false;
    case SassCompare::kLt:
      return x < y;
    case SassCompare::kEq:
      return x == y;
    case SassCompare::kLe:
      return x <= y;
    case SassCompare::kGt:
      return x > y;
    case SassCompare::kNe:
      return x != y;
    case SassCompare::kGe:
      return x >= y;
    case SassCompare::kT:
      return true;
  }
  return false;
}

bool IsNan(uint32_t f32) { return (f32 & 0x7fffffff) > 0x7f800000; }

// An f32's place in the order of the reals: its magnitude's bits, negated
// where its sign is set, so +0 and -0 are equal and infinities the ends.
int64_t FloatOrder(uint32_t f32) {
  const int64_t magnitude = f32 & 0x7fffffff;
  return (f32 >> 31) != 0 ? -magnitude : magnitude;
}

// An f32 operand's bits after its modifiers (FSETP, FMUL, FADD): its
// magnitude, then its sign flipped (neither touches a NaN's payload nor
// whether it is one).
uint32_t FloatModified(uint32_t f32, const SassOperand& o) {
  if (o.abs) f32 &= 0x7fffffff;
  if (o.negate) f32 ^= 0x80000000;
  return f32;
}

// FSETP's comparison, read off the bits so the host's floating-point
// environment (flush-to-zero, fast-math) plays no part: the relation of
// codes 1..6 is that of 9..14, ordered (false with a NaN) below 8 and
// unordered (true with a NaN) above.
bool FloatCompare(SassFloatCompare c, uint32_t a, uint32_t b) {
  const bool unordered = IsNan(a) || IsNan(b);
  const int code = static_cast<int>(c);
  switch (c) {
    case SassFloatCompare::kF:
      return false;
    case SassFloatCompare::kT:
      return true;
    case SassFloatCompare::kNum:
      return !unordered;
    case SassFloatCompare::kNan:
      return unordered;
    default:
      break;
  }
  if (unordered) return code > 8;
  const int64_t x = FloatOrder(a), y = FloatOrder(b);
  switch (code & 7) {
    case 1:
      return x < y;
    case 2:
      return x == y;
    case 3:
      return x <= y;
    case 4:
      return x > y;
    case 5:
      return x != y;
    default:  // 6
      return x >= y;
  }
}

bool SetOp(int op, bool x, bool y) {
  return op == 0 ? (x && y) : op == 1 ? (x || y) : (x != y);
}

// PTX's prmt, which PRMT implements: for each byte of the result, which
// byte of {c:a} it takes (0..7), and whether it is that byte's sign
// replicated (mode 0's selector bit 3).
struct BytePick {
  int from = 0;
  bool sign = false;
};

std::array<BytePick, 4> PermutePicks(uint32_t sel, int mode) {
  std::array<BytePick, 4> picks;
  const int s = static_cast<int>(sel & 3);
  for (int i = 0; i < 4; ++i) {
    int from = 0;
    switch (mode) {
      case 0: {
        const uint32_t n = (sel >> (4 * i)) & 0xf;
        picks[i] = {static_cast<int>(n & 7), (n & 8) != 0};
        continue;
      }
      case 1:
        from = (s + i) & 7;
        break;  // F4E
      case 2:
        from = (s - i + 8) & 7;
        break;  // B4E
      case 3:
        from = s;
        break;  // RC8
      case 4:
        from = std::max(i, s);
        break;  // ECL
      case 5:
        from = std::min(i, s);
        break;  // ECR
      default:
        from = (s & 1) * 2 + (i & 1);
        break;  // RC16
    }
    picks[i] = {from, false};
  }
  return picks;
}

}  // namespace

void Machine::Move(const SassOperand& from, int dst, bool uniform) {
  if (from.kind == SassOperand::kRegister ||
      from.kind == SassOperand::kUniform) {
    const Word* w = Slot(from.reg, from.kind == SassOperand::kUniform);
    Word* to = Slot(dst, uniform);
    if (w != nullptr && to != nullptr) {
      *to = *w;  // value, definedness and opacity as they are
      const auto kind = from.kind == SassOperand::kUniform
                            ? SassAccess::kUniform
                            : SassAccess::kRegister;
      Note(reads_, kind, from.reg, w->value);
      Note(writes_, uniform ? SassAccess::kUniform : SassAccess::kRegister,
           dst, w->value);
      return;
    }
  }
  WriteReg(dst, uniform, Read(from));
}

void Machine::Prmt(const SassInstruction& i) {
  const uint32_t a = Read(i.src[0]);
  const uint32_t c = Read(i.src[2]);
  tainted_ = false;  // only the selector taints the whole result
  const uint32_t sel = Read(i.src[1]);
  const uint8_t undefined_in =
      UndefinedBytes(i.src[0]) | UndefinedBytes(i.src[2]) << 4;
  const uint64_t bytes = uint64_t{c} << 32 | a;
  uint32_t d = 0;
  uint8_t undefined = 0;
  const std::array<BytePick, 4> picks = PermutePicks(sel, i.prmt_mode);
  for (int k = 0; k < 4; ++k) {
    uint32_t byte =
        static_cast<uint32_t>(bytes >> (8 * picks[k].from)) & 0xff;
    if (picks[k].sign) byte = (byte & 0x80) ? 0xff : 0;
    d |= byte << (8 * k);
    if ((undefined_in >> picks[k].from) & 1) undefined |= 1 << k;
  }
  if (tainted_) undefined = 0xf;
  if (Word* w = Slot(i.dst, i.uniform)) {
    *w = {d, undefined, false};
    Note(writes_, i.uniform ? SassAccess::kUniform : SassAccess::kRegister,
         i.dst, d);
  }
}

void Machine::Isetp(const SassInstruction& i) {
  if (i.pdst[1] != kSassPt) {
    Refuse("a second predicate destination");
    return;
  }
  const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
  bool r = Compare(i.compare, a, b, i.is_signed);
  if (i.extended) {
    // The high words decide, the low compare where they are equal.
    if (i.compare == SassCompare::kF || i.compare == SassCompare::kT) {
      Refuse("ISETP.EX with a constant compare");
      return;
    }
    if (a == b) r = ReadPred(i.psrc[0]);
  }
  WritePred(i.pdst[0], i.pdst_uniform,
            SetOp(i.set_op, r, ReadPred(i.psrc[1])));
}

namespace {

// An f32 rounded from `exact` as `round` says: the nearest (ties to even),
// or the next f32 toward -inf, +inf or zero. `exact` is the exact result of
// the operation (a product of two f32s is exact in a double), or one
// rounded to nearest in a double, which rounds to the f32 that the exact
// one would (53 >= 2 * 24 + 2: double rounding is innocuous for +, *).
float RoundToF32(double exact, SassRound round) {
  float f = static_cast<float>(exact);
  const double rounded = f;
  if (round == SassRound::kUp && rounded < exact) {
    f = std::nextafter(f, HUGE_VALF);
  } else if (round == SassRound::kDown && rounded > exact) {
    f = std::nextafter(f, -HUGE_VALF);
  } else if (round == SassRound::kZero &&
             std::fabs(rounded) > std::fabs(exact)) {
    f = std::nextafter(f, 0.0f);
  }
  return f;
}

}  // namespace

void Machine::FloatArithmetic(const SassInstruction& i) {
  const double a =
      std::bit_cast<float>(FloatModified(Read(i.src[0]), i.src[0]));
  const double b =
      std::bit_cast<float>(FloatModified(Read(i.src[1]), i.src[1]));
  const double exact = i.op == SassOp::kFmul ? a * b : a + b;
  if (std::isnan(exact)) {
    // The unit's NaN (its sign and payload) is not pinned here: a value
    // never written, which refuses where it reaches a store, an address,
    // a predicate or a branch.
    tainted_ = true;
  }
  WriteDst(std::bit_cast<uint32_t>(RoundToF32(exact, i.round)));
}

void Machine::Fsetp(const SassInstruction& i) {
  const uint32_t a = FloatModified(Read(i.src[0]), i.src[0]);
  const uint32_t b = FloatModified(Read(i.src[1]), i.src[1]);
  WritePred(i.pdst[0], false,
            SetOp(i.set_op, FloatCompare(i.float_compare, a, b),
                  ReadPred(i.psrc[1])));
}

uint64_t Machine::Negated(uint32_t v, bool negate, bool extended) {
  if (!negate) return v;
  return extended ? uint64_t{~v} : uint64_t{~v} + 1;
}

uint64_t Machine::Addend(const SassOperand& o, bool extended) {
  return Negated(Read(o), o.negate, extended);
}

void Machine::WriteCarry(uint64_t sum, int pdst, bool uniform) {
  if (pdst == kSassPt) return;
  const uint64_t carry = sum >> 32;
  if (carry > 1) {
    Refuse("a carry of 2 out of a three-operand sum");
    return;
  }
  WritePred(pdst, uniform, carry == 1);
}

void Machine::Iadd3(const SassInstruction& i) {
  const uint64_t a = Addend(i.src[0], i.extended),
                 b = Addend(i.src[1], i.extended),
                 c = Addend(i.src[2], i.extended);
  uint64_t sum = a + b + c;
  if (i.extended) sum += ReadPred(i.psrc[0]) + ReadPred(i.psrc[1]);
  WriteDst(static_cast<uint32_t>(sum));
  if (i.pdst[1] == kSassPt) {
    WriteCarry(sum, i.pdst[0], i.pdst_uniform);
    return;
  }
  // Two carries out: that of a + b, then that of its low word + c, so
  // that they add up to the sum's (a calibration question: only their
  // sum is pinned by the code that reads them, docs/sass-evaluator.md).
  if (i.extended) {
    Refuse("IADD3.X with two carries out");
    return;
  }
  const uint64_t ab = a + b;
  WritePred(i.pdst[0], i.pdst_uniform, (ab >> 32) != 0);
  WritePred(i.pdst[1], i.pdst_uniform, ((ab & 0xffffffff) + c) >> 32 != 0);
}

void Machine::Lea(const SassInstruction& i) {
  const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
  uint64_t shifted;
  if (i.hi) {
    // .SX32: the pair is a sign-extended (c is not read).
    const uint32_t high =
        i.is_signed ? static_cast<uint32_t>(static_cast<int32_t>(a) >> 31)
                    : Read(i.src[2]);
    const uint64_t pair = uint64_t{high} << 32 | a;
    shifted = (pair << i.shift) >> 32 & 0xffffffff;
  } else {
    if (i.extended) {
      Refuse("LEA.X without .HI");
      return;
    }
    shifted = uint64_t{a << i.shift};
  }
  // b negated as IADD3's: in two's complement, bitwise with .X.
  uint64_t sum = shifted + Negated(b, i.src[1].negate, i.extended);
  if (i.extended) sum += ReadPred(i.psrc[0]);
  WriteDst(static_cast<uint32_t>(sum));
  WriteCarry(sum, i.pdst[0], i.pdst_uniform);
}

void Machine::Shf(const SassInstruction& i) {
  const uint64_t pair = uint64_t{Read(i.src[2])} << 32 | Read(i.src[0]);
  uint32_t s = Read(i.src[1]);
  const uint32_t width = static_cast<uint32_t>(i.width);
  s = i.wrap ? s & (width - 1) : std::min(s, width);
  uint64_t r;
  if (!i.right) {
    r = s >= 64 ? 0 : pair << s;
  } else if (i.is_signed) {
    r = static_cast<uint64_t>(static_cast<int64_t>(pair) >> std::min(s, 63u));
  } else {
    r = s >= 64 ? 0 : pair >> s;
  }
  WriteDst(static_cast<uint32_t>(i.hi ? r >> 32 : r));
}

uint32_t Machine::Sgxt(uint32_t a, uint32_t b, bool is_signed, bool wrap) {
  const uint32_t n = wrap ? b & 31 : std::min(b, 32u);
  if (n == 0) return 0;
  if (n >= 32) return a;
  const uint32_t mask = (1u << n) - 1;
  const uint32_t low = a & mask;
  if (is_signed && ((low >> (n - 1)) & 1)) return low | ~mask;
  return low;
}

uint32_t Machine::Bmsk(uint32_t pos, uint32_t width, bool wrap) {
  if (wrap) {
    pos &= 31;
    width &= 31;
  } else {
    pos = std::min(pos, 32u);
    width = std::min(width, 32u);
  }
  const uint64_t mask = ((uint64_t{1} << width) - 1) << pos;
  return static_cast<uint32_t>(mask);
}

void Machine::Imad(const SassInstruction& i) {
  const uint32_t c = Read(i.src[2]);
  uint64_t sum = uint64_t{Read(i.src[0]) * Read(i.src[1])} +
                 Negated(c, i.src[2].negate, i.extended);
  if (i.extended) sum += ReadPred(i.psrc[0]);
  WriteDst(static_cast<uint32_t>(sum));
}

void Machine::ImadWide(const SassInstruction& i) {
  const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
  const uint64_t product =
      i.is_signed ? static_cast<uint64_t>(int64_t{static_cast<int32_t>(a)} *
                                          int64_t{static_cast<int32_t>(b)})
                  : uint64_t{a} * b;
  if (i.op == SassOp::kImadHi) {
    // c is a pair too: the high word of a * b + {c+1:c} (-O3 passes
    // mad.hi's c as {c:0}); the carry out of that sum of 64-bit words, a
    // signed product taken as its two's-complement word (64-bit
    // division's Newton steps; mad.hi.cc's carry).
    if (i.extended) {
      Refuse("IMAD.HI with a carry in");
      return;
    }
    const unsigned __int128 sum =
        static_cast<unsigned __int128>(product) + PairAddend(i);
    WriteDst(static_cast<uint32_t>(static_cast<uint64_t>(sum) >> 32));
    WritePred(i.pdst[0], i.pdst_uniform, (sum >> 64) != 0);
    return;
  }
  // ptxas writes IMAD.WIDE by RZ inside -O3 carry chains (madc.hi.cc.u64)
  // where reading it as a product of zero gives values the oracle refutes:
  // it means something not yet understood, so it is not run.
  if (i.src[1].kind == SassOperand::kRegister && i.src[1].reg == kSassRz) {
    Refuse("IMAD.WIDE by RZ");
    return;
  }
  if (i.is_signed && (i.extended || i.pdst[0] != kSassPt)) {
    Refuse("a signed IMAD.WIDE with a carry");
    return;
  }
  unsigned __int128 sum =
      static_cast<unsigned __int128>(product) + PairAddend(i);
  if (i.extended) sum += ReadPred(i.psrc[0]);
  const uint64_t d = static_cast<uint64_t>(sum);
  WriteReg(i.dst, i.uniform, static_cast<uint32_t>(d));
  if (i.dst != (i.uniform ? kSassUrz : kSassRz)) {
    WriteReg(i.dst + 1, i.uniform, static_cast<uint32_t>(d >> 32));
  }
  WritePred(i.pdst[0], i.pdst_uniform, (sum >> 64) != 0);
}

uint64_t Machine::PairAddend(const SassInstruction& i) {
  const uint64_t c = ReadPair(i.src[2]);
  if (!i.src[2].negate) return c;
  return i.extended ? ~c : ~c + 1;
}

uint32_t Machine::MinMax(uint32_t a, uint32_t b, bool is_signed, bool min) {
  const bool a_less = Compare(SassCompare::kLt, a, b, is_signed);
  return min == a_less ? a : b;
}

uint32_t Machine::IntegerToF32(uint64_t b, int width, bool is_signed,
                               SassRound round) {
  const int unused = 64 - width;
  const uint64_t low = b << unused >> unused;
  const long double v =
      is_signed ? static_cast<long double>(static_cast<int64_t>(b << unused) >>
                                           unused)
                : static_cast<long double>(low);
  float f = static_cast<float>(v);
  const long double rounded = f;
  if (round == SassRound::kUp && rounded < v) {
    f = std::nextafter(f, HUGE_VALF);
  } else if (round == SassRound::kDown && rounded > v) {
    f = std::nextafter(f, -HUGE_VALF);
  } else if (round == SassRound::kZero && std::fabs(rounded) > std::fabs(v)) {
    f = std::nextafter(f, 0.0f);
  }
  return std::bit_cast<uint32_t>(f);
}

uint64_t Machine::F2iTruncU64(float f) {
  if (std::isnan(f) || f <= 0) return 0;
  if (f >= 18446744073709551616.0f) return ~uint64_t{0};
  return static_cast<uint64_t>(f);
}

uint32_t Machine::F2iTruncU32(float f) {
  if (std::isnan(f) || f <= 0) return 0;
  if (f >= 4294967296.0f) return 0xffffffffu;
  return static_cast<uint32_t>(f);
}

uint32_t Machine::Add16x2(uint32_t a, uint32_t b) {
  return ((a & 0xffff0000u) + (b & 0xffff0000u)) |
         ((a + b) & 0xffffu);
}

uint32_t Machine::MinMax16x2(uint32_t a, uint32_t b, bool is_signed, bool min) {
  uint32_t d = 0;
  for (int lane = 0; lane < 2; ++lane) {
    uint32_t x = (a >> (16 * lane)) & 0xffff, y = (b >> (16 * lane)) & 0xffff;
    if (is_signed) {  // compare as sign-extended halves
      x = static_cast<uint32_t>(static_cast<int16_t>(x));
      y = static_cast<uint32_t>(static_cast<int16_t>(y));
    }
    d |= (MinMax(x, y, is_signed, min) & 0xffff) << (16 * lane);
  }
  return d;
}

uint32_t Machine::Idp(const SassInstruction& i, uint32_t a, uint32_t b,
                      uint32_t c) {
  auto part = [](uint32_t v, int bits, int k, bool is_signed) -> int64_t {
    const uint32_t x = (v >> (bits * k)) & ((1u << bits) - 1);
    if (!is_signed) return x;
    return bits == 8 ? int64_t{static_cast<int8_t>(x)}
                     : int64_t{static_cast<int16_t>(x)};
  };
  uint32_t sum = c;
  const int terms = i.dp2a ? 2 : 4;
  for (int k = 0; k < terms; ++k) {
    const int64_t x = part(a, i.dp2a ? 16 : 8, k, i.a_signed);
    const int64_t y = part(b, 8, i.dp2a && i.hi ? k + 2 : k, i.b_signed);
    sum += static_cast<uint32_t>(x * y);
  }
  return sum;
}

uint32_t Machine::Flo(const SassInstruction& i) {
  uint32_t x = Read(i.src[1]);
  if (i.src[1].invert) x = ~x;
  if (i.is_signed && static_cast<int32_t>(x) < 0) x = ~x;
  if (x == 0) return 0xffffffff;
  const uint32_t pos = 31 - static_cast<uint32_t>(std::countl_zero(x));
  return i.shift_amount ? 31 - pos : pos;
}

void Machine::Plop3(const SassInstruction& i) {
  const uint32_t a = ReadPred(i.psrc[0]) ? 0xff : 0;
  const uint32_t b = ReadPred(i.psrc[1]) ? 0xff : 0;
  const uint32_t c = ReadPred(i.psrc[2]) ? 0xff : 0;
  const bool p = Lut3(i.lut & 0xff, a, b, c) & 1;
  const bool q = Lut3(i.lut >> 8, a, b, c) & 1;
  WritePred(i.pdst[0], i.pdst_uniform, p);
  WritePred(i.pdst[1], i.pdst_uniform, q);
}

void Machine::P2r(const SassInstruction& i) {
  const uint32_t mask = i.src[1].value;
  uint32_t d = 0;
  for (int p = 0; p < kSassPt; ++p) {
    if ((mask >> p & 1) && ReadPred({.index = p})) d |= 1u << p;
  }
  WriteDst(d);
}

void Machine::Ldc(const SassInstruction& i) {
  uint64_t offset = i.src[1].value;
  if (i.src[0].kind == SassOperand::kRegister)
    offset += ReadReg(i.src[0].reg, false);
  if (!RequireDefined("a constant load's index")) return;
  if (i.width < 4) {
    const uint32_t v = ReadConstant(i.src[1].bank, offset, i.width);
    const int bits = 8 * i.width;
    const uint32_t mask = (1u << bits) - 1;
    uint32_t d = v & mask;
    if (i.is_signed && ((d >> (bits - 1)) & 1)) d |= ~mask;
    WriteDst(d);
    return;
  }
  for (int w = 0; w < i.width / 4; ++w) {
    bool opaque = false;
    const uint32_t v =
        ReadConstant(i.src[1].bank, offset + 4 * w, 4, &opaque);
    const bool uniform = i.uniform;
    const int zero = uniform ? kSassUrz : kSassRz;
    if (i.dst == zero) break;
    if (w > 0 && (i.dst % 2 != 0 || i.dst + 1 >= zero)) {
      Refuse("an odd register pair");
      return;
    }
    WriteReg(i.dst + w, uniform, v, opaque);
  }
}

std::optional<uint64_t> Machine::GlobalAddress(const SassInstruction& i,
                                               const char* what) {
  const uint64_t base = ReadPair(i.src[0]);
  if (!RequireDefined(what)) return std::nullopt;
  return base + (static_cast<int32_t>(i.src[2].value << 8) >> 8);
}

const SassBuffer* Machine::BufferAt(uint64_t address, int size) const {
  for (const SassBuffer& buffer : launch_.buffers) {
    if (address >= buffer.address &&
        address + size <= buffer.address + buffer.bytes.size()) {
      return &buffer;
    }
  }
  return nullptr;
}

void Machine::Stg(const SassInstruction& i) {
  const std::optional<uint64_t> address =
      GlobalAddress(i, "a store's address");
  if (!address.has_value()) return;
  SassStore store{
      .pc = i.pc, .step = step_, .address = *address, .size = i.width};
  const int words = std::max(1, i.width / 4);
  const int data = i.src[1].reg;
  if (data != kSassRz && (data % words != 0 || data + words > kSassRz)) {
    Refuse("data registers");
    return;
  }
  for (int w = 0; w < words; ++w) {
    if (data == kSassRz) break;
    storing_ = true;
    store.words[w] = ReadReg(data + w, false);
    storing_ = false;
    const int stored = std::min(4, i.width - 4 * w);
    if (r_[data + w].undefined & ((1u << stored) - 1)) {
      Refuse(absl::StrCat("stores bytes of R", data + w, " never written"));
      return;
    }
  }
  if (i.width < 4) store.words[0] &= (1u << (8 * i.width)) - 1;
  if (!error_.empty()) return;
  const SassBuffer* buffer = BufferAt(store.address, i.width);
  if (buffer == nullptr || !buffer->writable) {
    Refuse(absl::StrFormat("stores to 0x%x, outside the launch's buffers",
                           store.address));
    return;
  }
  stores_.push_back(store);
}

void Machine::Ldg(const SassInstruction& i) {
  const std::optional<uint64_t> address =
      GlobalAddress(i, "a load's address");
  if (!address.has_value()) return;
  const SassBuffer* buffer = BufferAt(*address, i.width);
  if (buffer == nullptr) {
    Refuse(absl::StrFormat("loads from 0x%x, outside the launch's buffers",
                           *address));
    return;
  }
  if (buffer->writable) {
    Refuse("loads from a buffer the kernel stores to");
    return;
  }
  uint64_t value = 0;
  for (int b = 0; b < i.width; ++b) {
    value |= uint64_t{buffer->bytes[*address - buffer->address + b]}
             << (8 * b);
  }
  if (i.width < 4 && i.is_signed) {
    const int shift = 64 - 8 * i.width;
    value =
        static_cast<uint64_t>(static_cast<int64_t>(value << shift) >> shift);
  }
  if (i.width == 8 && (i.dst % 2 != 0 || i.dst + 1 >= kSassRz) &&
      i.dst != kSassRz) {
    Refuse("an odd register pair");
    return;
  }
  WriteDst(static_cast<uint32_t>(value));
  if (i.width == 8 && i.dst != kSassRz)
    WriteReg(i.dst + 1, false, static_cast<uint32_t>(value >> 32));
}

}  // namespace sass_machine_internal
}  // namespace ptxdiff
