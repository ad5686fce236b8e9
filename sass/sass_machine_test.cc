#include "sass/sass_machine.h"

#include <bit>
#include <cfenv>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "sass/sass_decoder.h"
#include "backends/ptxas/testing/compiled_kernel.h"
#include "backends/ptxas/testing/opt_level_fixture.h"
#include "backends/ptxas/sass_execution.h"

namespace ptxdiff {
namespace {

using ::ptxdiff::testing::RunCompiledKernel;
using ::testing::HasSubstr;

// The 32-bit words a kernel stored at 4k, run with `params` as p0, p1, ...
struct Stored {
  bool ran = false;
  std::string why_not;
  std::vector<uint32_t> words;
};

Stored RunKernel(const std::string& body, const std::vector<uint32_t>& params,
                 int words, int opt = 3) {
  absl::StatusOr<KernelExecution> ran =
      RunCompiledKernel(body, params, 4 * words, opt);
  EXPECT_TRUE(ran.ok()) << ran.status();
  if (!ran.ok()) return {};
  const KernelExecution& run = *ran;
  Stored out{.ran = run.ran, .why_not = run.why_not};
  const std::vector<int> image = StoredImage(run.stores, 4 * words);
  for (int w = 0; w < words; ++w) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b)
      v |= static_cast<uint32_t>(image[4 * w + b] & 0xff) << (8 * b);
    out.words.push_back(v);
  }
  return out;
}

class SassMachineTest : public ::ptxdiff::testing::OptLevelTest {};

TEST_P(SassMachineTest, RunsArithmeticOnItsParameters) {
  const std::string body =
      "  add.s32 %r4, %r0, %r1;\n  st.global.b32 [%out], %r4;\n"
      "  mul.lo.s32 %r5, %r0, %r1;\n  st.global.b32 [%out+4], %r5;\n"
      "  mul.hi.s32 %r6, %r0, %r1;\n  st.global.b32 [%out+8], %r6;\n"
      "  mad.lo.s32 %r7, %r0, %r1, %r2;\n  st.global.b32 [%out+12], %r7;\n"
      "  sub.s32 %r8, %r0, %r2;\n  st.global.b32 [%out+16], %r8;\n"
      "  shl.b32 %r9, %r0, %r1;\n  st.global.b32 [%out+20], %r9;\n"
      "  shr.s32 %r10, %r2, %r1;\n  st.global.b32 [%out+24], %r10;\n";
  for (auto [a, b, c] : {std::tuple<uint32_t, uint32_t, uint32_t>{7, 5, 3},
                         {0xfffffff0u, 3, 0x80000001u},
                         {0x12345678u, 40, 0xdeadbeefu}}) {
    const Stored s = RunKernel(body, {a, b, c}, 7, opt());
    ASSERT_TRUE(s.ran) << s.why_not;
    EXPECT_EQ(s.words[0], a + b);
    EXPECT_EQ(s.words[1], a * b);
    EXPECT_EQ(s.words[2],
              static_cast<uint32_t>((int64_t{static_cast<int32_t>(a)} *
                                     static_cast<int32_t>(b)) >>
                                    32));
    EXPECT_EQ(s.words[3], a * b + c);
    EXPECT_EQ(s.words[4], a - c);
    EXPECT_EQ(s.words[5], b >= 32 ? 0u : a << b);
    EXPECT_EQ(s.words[6], static_cast<uint32_t>(static_cast<int32_t>(c) >>
                                                (b >= 32 ? 31 : b)));
  }
}

TEST_P(SassMachineTest, RunsSixtyFourBitCarryChains) {
  const std::string body =
      "  mov.b64 %rd0, {%r0, %r1};\n  mov.b64 %rd1, {%r2, %r3};\n"
      "  add.s64 %rd2, %rd0, %rd1;\n  st.global.b64 [%out], %rd2;\n"
      "  sub.s64 %rd3, %rd0, %rd1;\n  st.global.b64 [%out+8], %rd3;\n"
      "  mul.lo.u64 %rd4, %rd0, %rd1;\n  st.global.b64 [%out+16], %rd4;\n";
  for (auto [x, y] : {std::pair<uint64_t, uint64_t>{0xffffffffull, 1},
                      {0x123456789abcdefull, 0xfedcba9876543210ull},
                      {5, 0x100000000ull},
                      {0xffffffffffffffffull, 0xffffffffffffffffull},
                      {0xfffffffe00000003ull, 0x80000000ffffffffull},
                      {0x00000001ffffffffull, 0xffffffff00000001ull}}) {
    const Stored s =
        RunKernel(body,
                  {static_cast<uint32_t>(x), static_cast<uint32_t>(x >> 32),
                   static_cast<uint32_t>(y), static_cast<uint32_t>(y >> 32)},
                  6, opt());
    ASSERT_TRUE(s.ran) << s.why_not;
    auto word64 = [&](int k) {
      return s.words[2 * k] | uint64_t{s.words[2 * k + 1]} << 32;
    };
    EXPECT_EQ(word64(0), x + y);
    EXPECT_EQ(word64(1), x - y);
    EXPECT_EQ(word64(2), x * y);
  }
}

// The mad.hi.u64 body of `tuples` tuples of kValues drawn by `seed`, and
// each tuple's high word as the host computes it.
struct MadHiKernel {
  std::string body;
  std::vector<uint64_t> want;
};

MadHiKernel MadHiTuples(int tuples, int seed) {
  // Each 32-bit half nonzero: ptxas multiplies a zero half by RZ, which
  // the machine refuses in carry chains (sass_machine_operations.cc).
  constexpr uint64_t kValues[] = {0x8000000180000001ull, ~0ull,
                                  0xfffffffefffffffeull, 0x7fffffff7fffffffull,
                                  0x123456789abcdefull, 0x1111111122222222ull};
  std::mt19937 random(seed);
  MadHiKernel k;
  for (int t = 0; t < tuples; ++t) {
    uint64_t v[3];
    for (uint64_t& x : v) x = kValues[random() % std::size(kValues)];
    absl::StrAppend(&k.body, "  mov.b64 %rd0, ", v[0], ";\n  mov.b64 %rd1, ",
                    v[1], ";\n  mov.b64 %rd2, ", v[2],
                    ";\n  mad.hi.u64 %rd4, %rd0, %rd1, %rd2;\n"
                    "  st.global.b64 [%out+", 8 * t, "], %rd4;\n");
    const unsigned __int128 wide =
        static_cast<unsigned __int128>(v[0]) * v[1];
    k.want.push_back(static_cast<uint64_t>(wide >> 64) + v[2]);
  }
  return k;
}

// More carries live at once than a thread has predicates: ptxas spills
// them with P2R Rd, PR, RZ, mask and reads each back with ISETP.NE. Every
// product's high word must still come out right, with carries of 1 and of
// 0 spilled (the trace shows both).
TEST(SassMachineSpills, RunsPredicatesSpilledThroughP2r) {
  if (!ptxdiff::testing::HavePtxas()) GTEST_SKIP() << "no ptxas here";
  constexpr int kTuples = 48;
  const MadHiKernel k = MadHiTuples(kTuples, 5);
  absl::StatusOr<KernelExecution> ran =
      RunCompiledKernel(k.body, {}, 8 * kTuples, 3, /*trace=*/true);
  ASSERT_TRUE(ran.ok()) << ran.status();
  ASSERT_TRUE(ran->ran) << ran->why_not;
  int spilled[2] = {0, 0};
  for (const SassTraceStep& step : ran->run.trace) {
    if (absl::StartsWith(step.text, "P2R")) ++spilled[step.dst_value != 0];
  }
  EXPECT_GT(spilled[0], 0) << "no 0 spilled: the test needs another kernel";
  EXPECT_GT(spilled[1], 0) << "no 1 spilled: the test needs another kernel";
  const std::vector<int> image = StoredImage(ran->stores, 8 * kTuples);
  for (int t = 0; t < kTuples; ++t) {
    uint64_t got = 0;
    for (int b = 0; b < 8; ++b) {
      got |= static_cast<uint64_t>(image[8 * t + b] & 0xff) << (8 * b);
    }
    EXPECT_EQ(got, k.want[t]) << "tuple " << t;
  }
}

TEST_P(SassMachineTest, RunsLoopsAndBranches) {
  const std::string body =
      "  mov.u32 %r2, 0;\n$L:\n  setp.eq.u32 %p0, %r1, 0;\n  @%p0 bra $D;\n"
      "  sub.u32 %r1, %r1, 1;\n  mul.lo.u32 %r0, %r0, 3;\n"
      "  xor.b32 %r2, %r2, %r0;\n  bra $L;\n$D:\n"
      "  st.global.b32 [%out], %r2;\n";
  for (uint32_t trips : {0u, 1u, 5u, 37u}) {
    uint32_t x = 0x1234, acc = 0;
    for (uint32_t t = 0; t < trips; ++t) {
      x *= 3;
      acc ^= x;
    }
    const Stored s = RunKernel(body, {0x1234, trips}, 1, opt());
    ASSERT_TRUE(s.ran) << s.why_not;
    EXPECT_EQ(s.words[0], acc) << trips << " trips";
  }
}

// The host's conversion of `v` to an f32 under a rounding mode: the
// reference for I2F (and I2FP), whose 2-bit field is .RN, .RM, .RP, .RZ.
float HostF32(double v, int mode) {
  const int old = std::fegetround();
  std::fesetround(mode);
  volatile double exact = v;  // a runtime conversion, in `mode`
  volatile float f = static_cast<float>(exact);
  std::fesetround(old);
  return f;
}

// cvt.rX.f32 of 8- to 32-bit integers (I2F, I2FP): each rounding, each
// width read from the low bits of a 32-bit register, signed or not.
TEST_P(SassMachineTest, ConvertsIntegersToF32InEveryRoundingAndWidth) {
  struct Form {
    const char* cvt;
    int mode, width;
    bool is_signed;
  };
  const std::vector<Form> forms = {
      {"cvt.rn.f32.s32", FE_TONEAREST, 32, true},
      {"cvt.rm.f32.u32", FE_DOWNWARD, 32, false},
      {"cvt.rp.f32.s32", FE_UPWARD, 32, true},
      {"cvt.rz.f32.s32", FE_TOWARDZERO, 32, true},
      {"cvt.rn.f32.u16", FE_TONEAREST, 16, false},
      {"cvt.rm.f32.s16", FE_DOWNWARD, 16, true},
      {"cvt.rn.f32.s8", FE_TONEAREST, 8, true},
      {"cvt.rz.f32.u8", FE_TOWARDZERO, 8, false},
  };
  std::string body;
  for (size_t k = 0; k < forms.size(); ++k) {
    absl::StrAppend(&body, "  ", forms[k].cvt, " %r", 8 + k, ", %r0;\n",
                    "  st.global.b32 [%out+", 4 * k, "], %r", 8 + k, ";\n");
  }
  for (uint32_t a : {0u, 1u, 0xffffffffu, 0x01000001u, 0x7fffffffu,
                     0x80000001u, 0xfeffffffu, 0x12345677u, 0xffff8000u,
                     0x000001ffu, 0x00000080u}) {
    const Stored s = RunKernel(body, {a}, static_cast<int>(forms.size()),
                               opt());
    ASSERT_TRUE(s.ran) << s.why_not;
    for (size_t k = 0; k < forms.size(); ++k) {
      const Form& f = forms[k];
      const uint32_t low =
          f.width == 32 ? a : a & ((uint32_t{1} << f.width) - 1);
      const double v = f.is_signed
                           ? static_cast<double>(static_cast<int32_t>(
                                 low << (32 - f.width)) >>
                                                 (32 - f.width))
                           : static_cast<double>(low);
      EXPECT_EQ(s.words[k], std::bit_cast<uint32_t>(HostF32(v, f.mode)))
          << f.cvt << " of 0x" << std::hex << a << " at -O" << opt();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OptLevels, SassMachineTest, ::testing::Values(0, 3),
                         [](const auto& info) {
                           return absl::StrCat("O", info.param);
                         });

// Hand-made kernels: what the machine refuses.
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

// A register never written taints what is computed from it; storing it
// refuses (ptxas's 16-bit code computes on garbage upper halves it never
// stores, which runs).
TEST(SassMachineRefusals, StoringARegisterNeverWritten) {
  SassInstruction add{.op = SassOp::kIadd3, .dst = 2};
  add.src = {SassOperand{.kind = SassOperand::kRegister, .reg = 1},
             SassOperand{.kind = SassOperand::kRegister, .reg = kSassRz},
             SassOperand{.kind = SassOperand::kRegister, .reg = kSassRz}};
  SassInstruction stg{.op = SassOp::kStg, .width = 4};
  stg.src = {SassOperand{.kind = SassOperand::kRegister, .reg = kSassRz},
             SassOperand{.kind = SassOperand::kRegister, .reg = 2},
             SassOperand{.kind = SassOperand::kImmediate, .value = 0}};
  SassLaunch launch = EmptyLaunch();
  launch.buffers.push_back(
      {.address = 0, .bytes = std::vector<uint8_t>(16), .writable = true});
  const SassRun computed =
      RunSass({Insn(add, 0), Insn({.op = SassOp::kExit}, 16)}, launch);
  EXPECT_TRUE(computed.ran) << computed.why_not;
  const SassRun stored = RunSass(
      {Insn(add, 0), Insn(stg, 16), Insn({.op = SassOp::kExit}, 32)}, launch);
  EXPECT_FALSE(stored.ran);
  EXPECT_THAT(stored.why_not, HasSubstr("stores bytes of R2 never written"));
  EXPECT_EQ(stored.blocker, "STG.E: stores bytes of R2 never written");
}

TEST(SassMachineRefusals, ADriverWordUsedAsAValue) {
  SassInstruction ldc{.op = SassOp::kLdc, .dst = 1, .width = 4};
  ldc.src[0] = {.kind = SassOperand::kRegister, .reg = kSassRz};
  ldc.src[1] = {.kind = SassOperand::kConstant, .value = 0x28};
  SassInstruction add{.op = SassOp::kIadd3, .dst = 2};
  add.src = {SassOperand{.kind = SassOperand::kRegister, .reg = 1},
             SassOperand{.kind = SassOperand::kImmediate, .value = 1},
             SassOperand{.kind = SassOperand::kRegister, .reg = kSassRz}};
  const SassRun loaded =
      RunSass({Insn(ldc, 0), Insn({.op = SassOp::kExit}, 16)}, EmptyLaunch());
  EXPECT_TRUE(loaded.ran) << loaded.why_not;  // loading it is fine
  const SassRun used =
      RunSass({Insn(ldc, 0), Insn(add, 16), Insn({.op = SassOp::kExit}, 32)},
              EmptyLaunch());
  EXPECT_FALSE(used.ran);
  EXPECT_THAT(used.why_not, HasSubstr("uses R1, a word the driver fills"));
}

TEST(SassMachineRefusals, ARunPastItsStepBudget) {
  const SassRun run =
      RunSass({Insn({.op = SassOp::kBra, .target = 0}, 0)}, EmptyLaunch());
  EXPECT_FALSE(run.ran);
  EXPECT_EQ(run.blocker, "step budget");
  EXPECT_EQ(run.steps, 1001);
}

TEST(SassMachineRefusals, AnInstructionNotUnderstood) {
  const SassArchInfo arch = *FindSassArchInfo("sm_90");
  const SassRun run =
      RunSass({DecodeSassInstruction(arch, 0x7215, 0, 0)}, EmptyLaunch());
  EXPECT_FALSE(run.ran);
  EXPECT_EQ(run.blocker, "op 0x215");
}

TEST(SassMachineRefusals, AStoreOutsideTheBuffers) {
  SassInstruction stg{.op = SassOp::kStg, .width = 4};
  stg.src = {SassOperand{.kind = SassOperand::kRegister, .reg = kSassRz},
             SassOperand{.kind = SassOperand::kRegister, .reg = kSassRz},
             SassOperand{.kind = SassOperand::kImmediate, .value = 0x40}};
  const SassRun run =
      RunSass({Insn(stg, 0), Insn({.op = SassOp::kExit}, 16)}, EmptyLaunch());
  EXPECT_FALSE(run.ran);
  EXPECT_THAT(run.why_not, HasSubstr("outside the launch's buffers"));
}

// 64-bit division: ptxas calls a subroutine (CALL.REL.NOINC, RET.REL.NODEC
// to an address the caller keeps in registers) that estimates the
// reciprocal through I2F.U64.RP, MUFU.RCP and F2I.U64.TRUNC and corrects
// it with integer Newton steps (IMAD.HI writing a carry). Operands of every
// magnitude, at -O0 and -O3, give C++'s quotients and remainders.
constexpr const char* kSixtyFourBitDivisions[] = {"div.u64", "rem.u64",
                                                  "div.s64", "rem.s64"};

// A kernel `k(out, p0, p1)` that stores `op` of its two u64 parameters.
std::string DivisionKernel(absl::string_view op) {
  return absl::StrCat(
      ".version 9.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 out, .param .u64 p0, .param .u64 p1)\n"
      "{\n  .reg .b64 %rd<4>, %out;\n  ld.param.u64 %out, [out];\n"
      "  cvta.to.global.u64 %out, %out;\n  ld.param.u64 %rd1, [p0];\n"
      "  ld.param.u64 %rd2, [p1];\n  ",
      op, " %rd3, %rd1, %rd2;\n  st.global.u64 [%out], %rd3;\n  ret;\n}\n");
}

// The u64 `kernel` stored, run on a and b; fails the test if it did not run.
uint64_t RunDivision(const std::vector<SassSlot>& kernel, uint64_t a,
                     uint64_t b) {
  const KernelExecution run = ExecuteKernel(
      *FindSassArchInfo("sm_90"), kernel,
      std::vector<KernelArgument>{{.bytes = 8, .value = a},
                                  {.bytes = 8, .value = b}},
      8);
  EXPECT_TRUE(run.ran) << run.why_not;
  EXPECT_EQ(run.stores.size(), 1u);
  return run.ran && run.stores.size() == 1 ? run.stores[0].Low64() : 0;
}

TEST_P(SassMachineTest, RunsSixtyFourBitDivisionThroughItsSubroutine) {
  std::mt19937_64 rng(64);
  auto any_magnitude = [&] {
    const int bits = static_cast<int>(rng() % 64) + 1;
    return rng() >> (64 - bits);
  };
  for (const char* op : kSixtyFourBitDivisions) {
    const std::string ptx = DivisionKernel(op);
    absl::StatusOr<std::vector<SassSlot>> kernel =
        ptxdiff::testing::CompileSass(ptx, "k", opt());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const bool is_signed = op[4] == 's';
    const bool is_div = op[0] == 'd';
    for (int k = 0; k < 2000; ++k) {
      uint64_t a = any_magnitude(), b = any_magnitude();
      if (is_signed && rng() % 2) a = ~a + 1;
      if (is_signed && rng() % 2) b = ~b + 1;
      if (b == 0 || (is_signed && b == ~uint64_t{0})) continue;
      const KernelExecution run = ExecuteKernel(
          *FindSassArchInfo("sm_90"), *kernel,
          std::vector<KernelArgument>{{.bytes = 8, .value = a},
                                      {.bytes = 8, .value = b}},
          8);
      ASSERT_TRUE(run.ran) << op << ": " << run.why_not;
      ASSERT_EQ(run.stores.size(), 1u);
      const int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
      const uint64_t want =
          is_signed ? static_cast<uint64_t>(is_div ? sa / sb : sa % sb)
                    : (is_div ? a / b : a % b);
      ASSERT_EQ(run.stores[0].Low64(), want)
          << op << " 0x" << std::hex << a << ", 0x" << b << " at -O" << opt();
    }
  }
}

// nvJitLink keeps the division subroutine as a function of its own
// (`__cuda_sm20_div_u64`) and reaches it with CALL.ABS.NOINC (op 0x943) and
// RET.ABS.NODEC at the addresses linking gives (cubin_link.h). Its code
// gives the oracle's quotients and remainders, INT64_MIN / -1 included; by
// zero, which the oracle leaves unspecified, the same value as the ptxas
// executable's code.
TEST_P(SassMachineTest, RunsNvJitLinksSixtyFourBitDivisionAsTheOracleSays) {
  using ptxdiff::testing::CompileSass;
  using ptxdiff::testing::SassCompiler;
  constexpr uint64_t kMin = uint64_t{1} << 63;
  std::vector<uint64_t> values = {0,        1,           2,         7,
                                  100,      0xffffffff,  1ull << 32, kMin,
                                  kMin - 1, ~uint64_t{0}, ~uint64_t{6}};
  std::mt19937_64 rng(943);
  for (int k = 0; k < 20; ++k) values.push_back(rng() >> (rng() % 64));
  for (const char* op : kSixtyFourBitDivisions) {
    absl::StatusOr<std::vector<SassSlot>> jit =
        CompileSass(DivisionKernel(op), "k", opt(), SassCompiler::kNvJitLink);
    if (absl::IsFailedPrecondition(jit.status())) {
      GTEST_SKIP() << jit.status().message();
    }
    ASSERT_TRUE(jit.ok()) << jit.status();
    ASSERT_THAT(SassListing(*jit), HasSubstr("CALL.ABS.NOINC"));
    const absl::StatusOr<std::vector<SassSlot>> exe =
        CompileSass(DivisionKernel(op), "k", opt());
    ASSERT_TRUE(exe.ok()) << exe.status();
    const Variant variant = *ParseVariant(op);
    size_t by_zero = 0;
    for (uint64_t a : values) {
      for (uint64_t b : values) {
        const uint64_t got = RunDivision(*jit, a, b);
        const Result want = Evaluate(variant, {{a, b}});
        if (want.undefined == Undefined::kDivisionByZero) {
          ++by_zero;
          EXPECT_EQ(got, RunDivision(*exe, a, b)) << op << " " << a << ", 0";
        } else {
          EXPECT_EQ(got, want.bits) << op << " 0x" << std::hex << a << ", 0x"
                                    << b << " at -O" << std::dec << opt();
        }
      }
    }
    EXPECT_EQ(by_zero, values.size() * absl::c_count(values, 0));
  }
}

// Global loads (LDG) of every size from an input buffer indexed by the
// thread, as reproducers read their inputs (`in[tid]`): each lane reads its
// own words, 8- and 16-bit ones sign- or zero-extended as their type says,
// 64-bit ones into a register pair; a load outside the launch's buffers is
// refused, naming its address.
TEST_P(SassMachineTest, LoadsEachLanesWordsFromAnInputBuffer) {
  const std::string ptx =
      ".version 9.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
      "  .reg .b64 %rd<8>, %out;\n  .reg .b32 %r<12>;\n  .reg .b16 %h1;\n"
      "  ld.param.u64 %out, [out];\n  cvta.to.global.u64 %out, %out;\n"
      "  ld.param.u64 %rd1, [in];\n  cvta.to.global.u64 %rd1, %rd1;\n"
      "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd2, %r1, 16;\n"
      "  add.s64 %rd3, %rd1, %rd2;\n"
      "  ld.global.u32 %r2, [%rd3];\n  ld.global.u16 %h1, [%rd3+4];\n"
      "  cvt.u32.u16 %r3, %h1;\n  ld.global.s16 %r4, [%rd3+6];\n"
      "  ld.global.u8 %r5, [%rd3+7];\n  ld.global.s8 %r6, [%rd3+6];\n"
      "  ld.global.u64 %rd4, [%rd3+8];\n"
      "  st.global.u32 [%out], %r2;\n  st.global.u32 [%out+4], %r3;\n"
      "  st.global.u32 [%out+8], %r4;\n  st.global.u32 [%out+12], %r5;\n"
      "  st.global.u32 [%out+16], %r6;\n  st.global.u64 [%out+24], %rd4;\n"
      "  ret;\n}\n";
  absl::StatusOr<std::vector<SassSlot>> kernel =
      ptxdiff::testing::CompileSass(ptx, "k", opt());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // Lane l's 16 bytes: 0xa0b0c0d0 + l, 0x1234, 0x80 0xf0 (a negative s16
  // and s8, bytes 6 and 7), 0x1122334455667700 + l.
  std::vector<uint8_t> in;
  for (uint32_t lane = 0; lane < 4; ++lane) {
    const uint64_t words[2] = {0xf0801234a0b0c0d0ull + lane,
                               0x1122334455667700ull + lane};
    for (uint64_t w : words)
      for (int b = 0; b < 8; ++b)
        in.push_back(static_cast<uint8_t>(w >> 8 * b));
  }
  for (uint32_t lane = 0; lane < 4; ++lane) {
    const KernelExecution run =
        ExecuteKernel(*FindSassArchInfo("sm_90"), *kernel,
                      std::vector<KernelArgument>{{.bytes = 8, .pointee = in}},
                      32, false, lane);
    ASSERT_TRUE(run.ran) << run.why_not;
    const std::vector<int> image = StoredImage(run.stores, 32);
    auto word = [&](int at) {
      uint32_t v = 0;
      for (int b = 0; b < 4; ++b)
        v |= static_cast<uint32_t>(image[at + b]) << 8 * b;
      return v;
    };
    EXPECT_EQ(word(0), 0xa0b0c0d0u + lane) << "lane " << lane;
    EXPECT_EQ(word(4), 0x1234u);
    EXPECT_EQ(word(8), 0xfffff080u);   // s16 0xf080
    EXPECT_EQ(word(12), 0xf0u);        // u8
    EXPECT_EQ(word(16), 0xffffff80u);  // s8 0x80
    EXPECT_EQ(word(24), 0x55667700u + lane);
    EXPECT_EQ(word(28), 0x11223344u);
  }
  // Lane 4 reads past the buffer's end.
  const KernelExecution past = ExecuteKernel(
      *FindSassArchInfo("sm_90"), *kernel,
      std::vector<KernelArgument>{{.bytes = 8, .pointee = in}}, 32, false, 4);
  EXPECT_FALSE(past.ran);
  EXPECT_THAT(past.why_not, HasSubstr("outside the launch's buffers"));
}

}  // namespace
}  // namespace ptxdiff
