// The machine's f32 operations (FSETP, FSEL, FMUL, FADD, F2I), which
// ptxas's and nvJitLink's 16-bit division computes in: by hand against
// IEEE 754's definitions, compiled from PTX against the host's f32
// arithmetic, and 16-bit division's code against C++'s / and %.

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "backends/ptxas/sass_execution.h"
#include "backends/ptxas/testing/compiled_kernel.h"
#include "backends/ptxas/testing/opt_level_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sass/sass_decoder.h"
#include "sass/sass_machine.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

SassSlot Insn(SassInstruction i, uint32_t pc) {
  i.pc = pc;
  return {.insn = i};
}

SassLaunch EmptyLaunch() {
  SassLaunch launch;
  launch.constant_bank.assign(0x218, 0);
  launch.known_from = 0x210;
  launch.max_steps = 1000;
  return launch;
}

// FSETP by hand: MOV R4, a; MOV R5, b; FSETP.`c`.`set_op` P0, PT, R4, R5,
// q; EXIT. The predicate it wrote, read off the trace.
struct FsetpCase {
  SassFloatCompare compare;
  uint32_t a, b;
  bool a_abs = false, a_negate = false, b_abs = false, b_negate = false;
  int set_op = 0;
  SassPredicate q;  // PT
};

std::optional<bool> RunFsetp(const FsetpCase& c) {
  SassInstruction mov_a{.op = SassOp::kMov, .dst = 4};
  mov_a.src[1] = {.kind = SassOperand::kImmediate, .value = c.a};
  SassInstruction mov_b{.op = SassOp::kMov, .dst = 5};
  mov_b.src[1] = {.kind = SassOperand::kImmediate, .value = c.b};
  SassInstruction fsetp{.op = SassOp::kFsetp};
  fsetp.src[0] = {.kind = SassOperand::kRegister,
                  .reg = 4,
                  .negate = c.a_negate,
                  .abs = c.a_abs};
  fsetp.src[1] = {.kind = SassOperand::kRegister,
                  .reg = 5,
                  .negate = c.b_negate,
                  .abs = c.b_abs};
  fsetp.float_compare = c.compare;
  fsetp.set_op = c.set_op;
  fsetp.psrc[1] = c.q;
  fsetp.pdst = {0, kSassPt};
  SassLaunch launch = EmptyLaunch();
  launch.trace = true;
  const SassRun run = RunSass({Insn(mov_a, 0), Insn(mov_b, 16), Insn(fsetp, 32),
                               Insn({.op = SassOp::kExit}, 48)},
                              launch);
  if (!run.ran || run.trace.size() != 4) {
    ADD_FAILURE() << run.why_not;
    return std::nullopt;
  }
  for (const SassAccess& w : run.trace[2].writes) {
    if (w.kind == SassAccess::kPredicate && w.index == 0) return w.value != 0;
  }
  ADD_FAILURE() << "FSETP wrote no P0";
  return std::nullopt;
}

// IEEE 754's predicates through C++'s operators, which are ordered (false
// with a NaN) but for !=: the unordered ones are the negations of ordered
// ones.
bool IeeeCompare(SassFloatCompare c, float x, float y) {
  const bool unordered = std::isnan(x) || std::isnan(y);
  switch (c) {
    case SassFloatCompare::kF:
      return false;
    case SassFloatCompare::kLt:
      return x < y;
    case SassFloatCompare::kEq:
      return x == y;
    case SassFloatCompare::kLe:
      return x <= y;
    case SassFloatCompare::kGt:
      return x > y;
    case SassFloatCompare::kNe:
      return x < y || x > y;
    case SassFloatCompare::kGe:
      return x >= y;
    case SassFloatCompare::kNum:
      return !unordered;
    case SassFloatCompare::kNan:
      return unordered;
    case SassFloatCompare::kLtu:
      return !(x >= y);
    case SassFloatCompare::kEqu:
      return !(x < y || x > y);
    case SassFloatCompare::kLeu:
      return !(x > y);
    case SassFloatCompare::kGtu:
      return !(x <= y);
    case SassFloatCompare::kNeu:
      return x != y;
    case SassFloatCompare::kGeu:
      return !(x < y);
    case SassFloatCompare::kT:
      return true;
  }
  return false;
}

// Each of FSETP's 16 compares on f32s of every kind (zeros of both signs,
// subnormals, FLT_MIN, infinities, quiet, signalling and negative NaNs) is
// IEEE's; the magnitude and negation flags apply before it.
TEST(SassMachineFsetp, ComparesAsIeeeSays) {
  const std::vector<uint32_t> values = {
      0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000, 0x00800000,
      0x80800000, 0x00000001, 0x80000001, 0x007fffff, 0x7f7fffff, 0xff7fffff,
      0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00000, 0x7fffffff};
  for (int code = 0; code < 16; ++code) {
    const auto c = static_cast<SassFloatCompare>(code);
    for (uint32_t a : values) {
      for (uint32_t b : values) {
        const std::optional<bool> got =
            RunFsetp({.compare = c, .a = a, .b = b});
        ASSERT_TRUE(got.has_value());
        ASSERT_EQ(*got, IeeeCompare(c, std::bit_cast<float>(a),
                                    std::bit_cast<float>(b)))
            << "compare " << code << " of 0x" << std::hex << a << ", 0x" << b;
      }
    }
  }
  // |a| against b, a against -b, -|a| against -|b|; a NaN stays unordered
  // through both.
  const uint32_t m2 = 0xc0000000, one = 0x3f800000, nan = 0xffc00000;
  using C = SassFloatCompare;
  EXPECT_EQ(RunFsetp({.compare = C::kGt, .a = m2, .b = one, .a_abs = true}),
            true);
  EXPECT_EQ(RunFsetp({.compare = C::kGt, .a = one, .b = one, .b_negate = true}),
            true);
  EXPECT_EQ(RunFsetp({.compare = C::kLt,
                      .a = one,
                      .b = m2,
                      .a_abs = true,
                      .a_negate = true,
                      .b_abs = true,
                      .b_negate = true}),
            false);
  EXPECT_EQ(RunFsetp({.compare = C::kGt,
                      .a = one,
                      .b = m2,
                      .a_abs = true,
                      .a_negate = true,
                      .b_abs = true,
                      .b_negate = true}),
            true);
  EXPECT_EQ(RunFsetp({.compare = C::kGeu,
                      .a = nan,
                      .b = one,
                      .a_abs = true,
                      .a_negate = true}),
            true);
  EXPECT_EQ(RunFsetp({.compare = C::kGe,
                      .a = nan,
                      .b = one,
                      .a_abs = true,
                      .a_negate = true}),
            false);
}

// The compare is combined with q by AND, OR or XOR.
TEST(SassMachineFsetp, CombinesTheCompareWithItsPredicate) {
  const uint32_t one = 0x3f800000, two = 0x40000000;
  const SassPredicate t{}, f{.negated = true};
  using C = SassFloatCompare;
  EXPECT_EQ(RunFsetp({.compare = C::kLt, .a = one, .b = two, .q = t}), true);
  EXPECT_EQ(RunFsetp({.compare = C::kLt, .a = one, .b = two, .q = f}), false);
  EXPECT_EQ(
      RunFsetp({.compare = C::kGt, .a = one, .b = two, .set_op = 1, .q = t}),
      true);
  EXPECT_EQ(
      RunFsetp({.compare = C::kGt, .a = one, .b = two, .set_op = 1, .q = f}),
      false);
  EXPECT_EQ(
      RunFsetp({.compare = C::kLt, .a = one, .b = two, .set_op = 2, .q = t}),
      false);
  EXPECT_EQ(
      RunFsetp({.compare = C::kGt, .a = one, .b = two, .set_op = 2, .q = t}),
      true);
}

// nvJitLink's FSETP.GEU.AND P1, PT, |R6|, FLT_MIN, PT (16-bit division's
// test of its divisor), decoded and run: true from FLT_MIN up in magnitude
// and for a NaN, false below.
TEST(SassMachineFsetp, RunsDivisionsTestOfItsDivisor) {
  const SassArchInfo arch = *FindSassArchInfo("sm_90");
  const SassSlot fsetp =
      DecodeSassInstruction(arch, 0x008000000600780b, 0x00003f2e200, 16);
  ASSERT_TRUE(fsetp.ok()) << fsetp.why_not;
  const std::vector<std::pair<uint32_t, bool>> divisors = {
      {0x00000000, false}, {0x80000000, false}, {0x00000001, false},
      {0x807fffff, false}, {0x00800000, true},  {0x80800000, true},
      {0x3f800000, true},  {0xc7800000, true},  {0xff800000, true},
      {0x7fc00000, true},  {0xffc00000, true}};
  for (const auto& [divisor, want] : divisors) {
    SassInstruction mov{.op = SassOp::kMov, .dst = 6};
    mov.src[1] = {.kind = SassOperand::kImmediate, .value = divisor};
    SassLaunch launch = EmptyLaunch();
    launch.trace = true;
    const SassRun run =
        RunSass({Insn(mov, 0), fsetp, Insn({.op = SassOp::kExit}, 32)}, launch);
    ASSERT_TRUE(run.ran) << run.why_not;
    ASSERT_EQ(run.trace[1].writes.size(), 1u);
    EXPECT_EQ(run.trace[1].writes[0].kind, SassAccess::kPredicate);
    EXPECT_EQ(run.trace[1].writes[0].index, 1);
    EXPECT_EQ(run.trace[1].writes[0].value, want ? 1u : 0u)
        << "divisor 0x" << std::hex << divisor;
  }
}

// FMUL and FADD by hand, then a store of the result: a NaN result's bits
// are not pinned, so storing it refuses; any other is stored as computed.
SassRun RunArithmetic(SassOp op, uint32_t a, uint32_t b) {
  SassInstruction mov_a{.op = SassOp::kMov, .dst = 4};
  mov_a.src[1] = {.kind = SassOperand::kImmediate, .value = a};
  SassInstruction arith{.op = op, .dst = 6};
  arith.src[0] = {.kind = SassOperand::kRegister, .reg = 4};
  arith.src[1] = {.kind = SassOperand::kImmediate, .value = b};
  SassInstruction stg{.op = SassOp::kStg, .width = 4};
  stg.src = {SassOperand{.kind = SassOperand::kRegister, .reg = kSassRz},
             SassOperand{.kind = SassOperand::kRegister, .reg = 6},
             SassOperand{.kind = SassOperand::kImmediate, .value = 0}};
  SassLaunch launch = EmptyLaunch();
  launch.buffers.push_back(
      {.address = 0, .bytes = std::vector<uint8_t>(4), .writable = true});
  return RunSass({Insn(mov_a, 0), Insn(arith, 16), Insn(stg, 32),
                  Insn({.op = SassOp::kExit}, 48)},
                 launch);
}

TEST(SassMachineFloat, ANanResultIsAValueNeverWritten) {
  const uint32_t zero = 0, inf = 0x7f800000, one = 0x3f800000;
  for (const auto& [op, a, b] :
       std::vector<std::tuple<SassOp, uint32_t, uint32_t>>{
           {SassOp::kFmul, zero, inf},
           {SassOp::kFmul, one, 0x7f800002},
           {SassOp::kFadd, inf, 0xff800000}}) {
    const SassRun run = RunArithmetic(op, a, b);
    EXPECT_FALSE(run.ran) << SassOpName(op, false);
    EXPECT_THAT(run.why_not, HasSubstr("never written"));
  }
  const SassRun product = RunArithmetic(SassOp::kFmul, 0x40400000, inf);
  ASSERT_TRUE(product.ran) << product.why_not;
  ASSERT_EQ(product.stores.size(), 1u);
  EXPECT_EQ(product.stores[0].words[0], inf);
}

// The host's f32 of `exact` rounded in `mode`.
float HostF32(double exact, int mode) {
  const int old = std::fegetround();
  std::fesetround(mode);
  volatile double v = exact;  // a runtime conversion, in `mode`
  volatile float f = static_cast<float>(v);
  std::fesetround(old);
  return f;
}

// f32s of every kind: zeros, subnormals, FLT_MIN, ones, products that
// overflow or fall below FLT_MIN, infinities, NaNs.
const std::vector<uint32_t>& FloatEdges() {
  static const std::vector<uint32_t> edges = {
      0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x3f800000,
      0xbf800000, 0x3fc00001, 0x40490fdb, 0x1f800001, 0x5f7fffff, 0x7f7fffff,
      0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001};
  return edges;
}

class SassFloatTest : public ::ptxdiff::testing::OptLevelTest {};

// setp's 14 compares on f32 parameters, each stored as selp's 1 or 0: the
// FSETPs (and FSELs, PLOP3s) ptxas makes of them agree with IEEE 754.
TEST_P(SassFloatTest, ComparesF32sAsIeeeSays) {
  constexpr const char* kCompares[] = {"eq",  "ne",  "lt",  "le",  "gt",
                                       "ge",  "equ", "neu", "ltu", "leu",
                                       "gtu", "geu", "num", "nan"};
  constexpr SassFloatCompare kAs[] = {
      SassFloatCompare::kEq,  SassFloatCompare::kNe,  SassFloatCompare::kLt,
      SassFloatCompare::kLe,  SassFloatCompare::kGt,  SassFloatCompare::kGe,
      SassFloatCompare::kEqu, SassFloatCompare::kNeu, SassFloatCompare::kLtu,
      SassFloatCompare::kLeu, SassFloatCompare::kGtu, SassFloatCompare::kGeu,
      SassFloatCompare::kNum, SassFloatCompare::kNan};
  std::string body =
      "  .reg .f32 %f<2>;\n  mov.b32 %f0, %r0;\n  mov.b32 %f1, %r1;\n";
  for (int k = 0; k < 14; ++k) {
    absl::StrAppend(&body, "  setp.", kCompares[k], ".f32 %p1, %f0, %f1;\n",
                    "  selp.u32 %r", 2 + k, ", 1, 0, %p1;\n",
                    "  st.global.b32 [%out+", 4 * k, "], %r", 2 + k, ";\n");
  }
  const absl::StatusOr<std::vector<SassSlot>> kernel =
      ptxdiff::testing::CompileSass(ptxdiff::testing::KernelOf(2, body), "k",
                                    opt());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (uint32_t a : FloatEdges()) {
    for (uint32_t b : FloatEdges()) {
      const KernelExecution run = ExecuteKernel(
          *FindSassArchInfo("sm_90"), *kernel,
          std::vector<KernelArgument>{{.value = a}, {.value = b}}, 4 * 14);
      ASSERT_TRUE(run.ran) << run.why_not;
      const std::vector<int> image = StoredImage(run.stores, 4 * 14);
      for (int k = 0; k < 14; ++k) {
        EXPECT_EQ(image[4 * k], IeeeCompare(kAs[k], std::bit_cast<float>(a),
                                            std::bit_cast<float>(b))
                                    ? 1
                                    : 0)
            << "setp." << kCompares[k] << " of 0x" << std::hex << a << ", 0x"
            << b << " at -O" << std::dec << opt();
      }
    }
  }
}

// mul.rX.f32 (FMUL in each rounding) and add.rn.f32 (FADD) give the
// host's correctly rounded values wherever they are not NaN.
TEST_P(SassFloatTest, MultipliesAndAddsF32sAsTheHostDoes) {
  struct Form {
    const char* ptx;
    int mode;
    bool add;
  };
  const std::vector<Form> forms = {{"mul.rn.f32", FE_TONEAREST, false},
                                   {"mul.rz.f32", FE_TOWARDZERO, false},
                                   {"mul.rm.f32", FE_DOWNWARD, false},
                                   {"mul.rp.f32", FE_UPWARD, false},
                                   {"add.rn.f32", FE_TONEAREST, true}};
  for (const Form& form : forms) {
    const std::string body = absl::StrCat(
        "  .reg .f32 %f<3>;\n  mov.b32 %f0, %r0;\n  mov.b32 %f1, %r1;\n  ",
        form.ptx, " %f2, %f0, %f1;\n  st.global.f32 [%out], %f2;\n");
    const absl::StatusOr<std::vector<SassSlot>> kernel =
        ptxdiff::testing::CompileSass(ptxdiff::testing::KernelOf(2, body), "k",
                                      opt());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    for (uint32_t a : FloatEdges()) {
      for (uint32_t b : FloatEdges()) {
        const double x = std::bit_cast<float>(a), y = std::bit_cast<float>(b);
        const double exact = form.add ? x + y : x * y;  // exact, or RN
        const KernelExecution run = ExecuteKernel(
            *FindSassArchInfo("sm_90"), *kernel,
            std::vector<KernelArgument>{{.value = a}, {.value = b}}, 4);
        if (std::isnan(exact)) {
          EXPECT_FALSE(run.ran)
              << form.ptx << " of 0x" << std::hex << a << ", 0x" << b;
          continue;
        }
        ASSERT_TRUE(run.ran) << form.ptx << ": " << run.why_not;
        ASSERT_EQ(run.stores.size(), 1u);
        EXPECT_EQ(run.stores[0].Low64(),
                  std::bit_cast<uint32_t>(HostF32(exact, form.mode)))
            << form.ptx << " of 0x" << std::hex << a << ", 0x" << b << " at -O"
            << std::dec << opt();
      }
    }
  }
}

// A kernel `k(out, a, b)` that stores `op` of its two 16-bit parameters.
std::string SixteenBitKernel(absl::string_view op) {
  return absl::StrCat(
      ".version 9.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 out, .param .b16 a, .param .b16 b)\n"
      "{\n  .reg .b16 %h<3>;\n  .reg .b64 %out;\n"
      "  ld.param.u64 %out, [out];\n  cvta.to.global.u64 %out, %out;\n"
      "  ld.param.b16 %h0, [a];\n  ld.param.b16 %h1, [b];\n  ",
      op, " %h2, %h0, %h1;\n  st.global.b16 [%out], %h2;\n  ret;\n}\n");
}

// 16-bit division and remainder, by the ptxas executable and by nvJitLink
// (its code a subroutine reached by CALL.ABS): the divisor's reciprocal in
// f32 (FSETP, FSEL, FMUL, MUFU.RCP, FMUL.RZ, F2I) gives C++'s quotients and
// remainders at the edges of both types and between; by zero, 0xffff.
TEST_P(SassFloatTest, RunsSixteenBitDivisionInF32s) {
  using ptxdiff::testing::CompileSass;
  using ptxdiff::testing::SassCompiler;
  std::vector<uint32_t> values = {0,      1,      2,      3,      7,
                                  0x7f,   0x80,   0xff,   0x100,  0x7ffe,
                                  0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff};
  std::mt19937 rng(16);
  for (int k = 0; k < 25; ++k) values.push_back(rng() >> (16 + rng() % 16));
  const SassArchInfo arch = *FindSassArchInfo("sm_90");
  for (const SassCompiler compiler :
       {SassCompiler::kPtxas, SassCompiler::kNvJitLink}) {
    for (const char* op : {"div.u16", "div.s16", "rem.u16", "rem.s16"}) {
      const absl::StatusOr<std::vector<SassSlot>> kernel =
          CompileSass(SixteenBitKernel(op), "k", opt(), compiler);
      if (compiler == SassCompiler::kNvJitLink &&
          absl::IsFailedPrecondition(kernel.status())) {
        continue;  // no libnvJitLink here
      }
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      EXPECT_THAT(SassListing(*kernel), HasSubstr("FSETP."));
      const bool is_signed = op[4] == 's', is_div = op[0] == 'd';
      for (uint32_t a : values) {
        for (uint32_t b : values) {
          const std::vector<KernelArgument> args = {{.bytes = 2, .value = a},
                                                    {.bytes = 2, .value = b}};
          const KernelExecution run = ExecuteKernel(arch, *kernel, args, 2);
          ASSERT_TRUE(run.ran) << op << ": " << run.why_not;
          ASSERT_EQ(run.stores.size(), 1u);
          const uint64_t got = run.stores[0].Low64() & 0xffff;
          uint32_t want = 0xffff;  // by zero, as both compilers' code does
          if (b != 0 && is_signed) {
            const int x = static_cast<int16_t>(a), y = static_cast<int16_t>(b);
            want = static_cast<uint32_t>(is_div ? x / y : x % y) & 0xffff;
          } else if (b != 0) {
            want = is_div ? a / b : a % b;
          }
          ASSERT_EQ(got, want)
              << op << " 0x" << std::hex << a << ", 0x" << b << " at -O"
              << std::dec << opt()
              << (compiler == SassCompiler::kPtxas ? " (ptxas)" : " (jit)");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OptLevels, SassFloatTest, ::testing::Values(0, 3),
                         [](const auto& info) {
                           return absl::StrCat("O", info.param);
                         });

}  // namespace
}  // namespace ptxdiff
