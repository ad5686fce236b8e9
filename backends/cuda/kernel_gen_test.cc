#include "backends/cuda/kernel_gen.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

// The line of `text` that starts (after indentation) with `prefix`.
std::string LineStarting(const std::string& text, absl::string_view prefix) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
    if (absl::StartsWith(stripped, prefix)) return std::string(stripped);
  }
  return "";
}

TEST(KernelModeTest, NamesParseBack) {
  for (KernelMode m : {KernelMode::kRegister, KernelMode::kImmediate}) {
    EXPECT_THAT(ParseKernelMode(KernelModeName(m)), Optional(m));
  }
  EXPECT_EQ(ParseKernelMode("registers"), std::nullopt);
}

TEST(TargetTest, NewestTargetNotAboveTheDevice) {
  auto sm = [](int device) { return TargetForDevice(device)->sm; };
  auto ptx = [](int device) { return TargetForDevice(device)->min_ptx; };
  EXPECT_EQ(sm(75), 75);
  EXPECT_EQ(ptx(75), 63);
  EXPECT_EQ(sm(86), 86);
  EXPECT_EQ(ptx(89), 78);
  EXPECT_EQ(ptx(90), 78);
  EXPECT_EQ(ptx(100), 86);
  EXPECT_EQ(sm(101), 100);  // Thor before its rename to sm_110
  EXPECT_EQ(ptx(110), 90);
  EXPECT_EQ(ptx(120), 87);
  EXPECT_EQ(ptx(121), 88);
  EXPECT_EQ(sm(130), 121);  // a future device runs PTX for an older target
  EXPECT_EQ(TargetForDevice(37), std::nullopt);
}

TEST(TargetTest, DriverPtxFromTheReleaseHistory) {
  EXPECT_EQ(MaxPtxOfDriver(11080), 78);
  EXPECT_EQ(MaxPtxOfDriver(12000), 80);
  EXPECT_EQ(MaxPtxOfDriver(12040), 84);
  EXPECT_EQ(MaxPtxOfDriver(12060), 85);  // 12.6 kept 8.5
  EXPECT_EQ(MaxPtxOfDriver(12080), 87);
  EXPECT_EQ(MaxPtxOfDriver(12090), 88);
  EXPECT_EQ(MaxPtxOfDriver(13000), 90);
  EXPECT_EQ(MaxPtxOfDriver(13020), 90);
  EXPECT_EQ(MaxPtxOfDriver(10020), 0);
}

TEST(TargetTest, VersionIsWhatVariantAndTargetNeed) {
  EXPECT_EQ(PtxVersionFor(V("add.s32"), *TargetForDevice(75)), 63);
  EXPECT_EQ(PtxVersionFor(V("add.s32"), *TargetForDevice(100)), 86);
  EXPECT_EQ(PtxVersionFor(V("bmsk.clamp.b32"), *TargetForDevice(75)), 76);
  EXPECT_EQ(PtxVersionFor(V("add.u16x2"), *TargetForDevice(90)), 80);
}

TEST(TargetTest, WhyUnsupported) {
  EXPECT_EQ(WhyUnsupported(V("add.s32"), 75, 90), std::nullopt);
  EXPECT_EQ(WhyUnsupported(V("add.u16x2"), 90, 80), std::nullopt);
  EXPECT_THAT(WhyUnsupported(V("add.u16x2"), 80, 90),
              Optional(std::string("needs sm_90; the device is sm_80")));
  EXPECT_THAT(WhyUnsupported(V("max.relu.s32"), 89, 90),
              Optional(HasSubstr("needs sm_90")));
  EXPECT_THAT(WhyUnsupported(V("bmsk.clamp.b32"), 80, 70),
              Optional(std::string("needs PTX ISA 7.6; the driver's JIT "
                                   "accepts up to 7.0")));
  EXPECT_THAT(WhyUnsupported(V("visa.shl.ud.ud.ud"), 90, 90),
              Optional(std::string("not a PTX instruction")));
  EXPECT_THAT(WhyUnsupported(V("add.s32"), 30, 90),
              Optional(HasSubstr("older than sm_50")));
  // The kernels set and read CC.CF: every variant that reads or writes it
  // runs (their PTX ISA levels are 6.x at most).
  int carries = 0;
  for (const Variant& v : AllVariants()) {
    if (!HasCarryOut(v) && !HasCarryIn(v)) continue;
    EXPECT_EQ(WhyUnsupported(v, 75, 90), std::nullopt) << Spell(v);
    ++carries;
  }
  EXPECT_EQ(carries, 48);
  EXPECT_EQ(WhyUnsupported(V("add.u32"), 100, 90), std::nullopt);
  EXPECT_EQ(WhyUnsupported(V("mad.lo.u32"), 100, 90), std::nullopt);
}

TEST(RegisterModuleTest, AddS32) {
  EXPECT_EQ(RegisterModule(V("add.s32"), *TargetForDevice(90)),
            R"(// ptxdiff variant: add.s32
.version 7.8
.target sm_90
.address_size 64

.visible .entry ptxdiff_register(
    .param .u64 ptxdiff_in,
    .param .u64 ptxdiff_out,
    .param .u32 ptxdiff_n)
{
  .reg .pred %p;
  .reg .b32 %i, %n, %t, %stride;
  .reg .b64 %in, %out, %tuple, %slot, %result;
  .reg .b32 %src0;
  .reg .b32 %src1;
  .reg .b32 %dst;
  ld.param.u64 %in, [ptxdiff_in];
  cvta.to.global.u64 %in, %in;
  ld.param.u64 %out, [ptxdiff_out];
  cvta.to.global.u64 %out, %out;
  ld.param.u32 %n, [ptxdiff_n];
  mov.u32 %i, %ctaid.x;
  mov.u32 %t, %ntid.x;
  mov.u32 %stride, %tid.x;
  mad.lo.u32 %i, %i, %t, %stride;
  mov.u32 %stride, %nctaid.x;
  mul.lo.u32 %stride, %stride, %t;
  setp.ge.u32 %p, %i, %n;
  @%p bra $done;
$loop:
  mul.wide.u32 %tuple, %i, 32;
  add.u64 %tuple, %in, %tuple;
  mul.wide.u32 %slot, %i, 8;
  add.u64 %slot, %out, %slot;
  ld.global.u32 %src0, [%tuple+0];
  ld.global.u32 %src1, [%tuple+8];
  add.s32 %dst, %src0, %src1;
  cvt.u64.u32 %result, %dst;
  st.global.u64 [%slot], %result;
  add.u32 %i, %i, %stride;
  setp.lt.u32 %p, %i, %n;
  @%p bra $loop;
$done:
  ret;
}
)");
}

TEST(RegisterModuleTest, RegistersAsWideAsTheOperands) {
  const std::string wide16 = RegisterBody(V("mul.wide.u16"));
  EXPECT_THAT(OperandDeclarations(V("mul.wide.u16")),
              "  .reg .b16 %src0;\n  .reg .b16 %src1;\n  .reg .b32 %dst;\n");
  EXPECT_THAT(wide16, HasSubstr("ld.global.u16 %src1, [%tuple+8];"));
  EXPECT_THAT(wide16, HasSubstr("cvt.u64.u32 %result, %dst;"));

  EXPECT_EQ(OperandDeclarations(V("popc.b64")),
            "  .reg .b64 %src0;\n  .reg .b32 %dst;\n");
  EXPECT_EQ(OperandDeclarations(V("bfe.u64")),
            "  .reg .b64 %src0;\n  .reg .b32 %src1;\n  .reg .b32 %src2;\n"
            "  .reg .b64 %dst;\n");
  // mad.wide.u32: c and the result are 64-bit, stored without conversion.
  const std::string mad = RegisterBody(V("mad.wide.u32"));
  EXPECT_THAT(mad, HasSubstr("ld.global.u64 %src2, [%tuple+16];"));
  EXPECT_THAT(mad, HasSubstr("st.global.u64 [%slot], %dst;"));
  EXPECT_THAT(mad, Not(HasSubstr("cvt")));
  EXPECT_THAT(RegisterBody(V("add.s16")),
              HasSubstr("cvt.u64.u16 %result, %dst;"));
  EXPECT_THAT(RegisterBody(V("bfi.b32")), HasSubstr("[%tuple+24]"));
}

TEST(RegisterModuleTest, VideoSelectorsAndNegation) {
  EXPECT_EQ(
      LineStarting(RegisterBody(V("vadd.u32.u32.u32.sat d.b1, a, b.h0, c")),
                   "vadd"),
      "vadd.u32.u32.u32.sat %dst.b1, %src0, %src1.h0, %src2;");
  EXPECT_EQ(
      LineStarting(RegisterBody(V("vmad.s32.s32.s32.sat d, -a.b1, b.h0, c")),
                   "vmad"),
      "vmad.s32.s32.s32.sat %dst, -%src0.b1, %src1.h0, %src2;");
}

// Predicates and bytes. selp's c is loaded as a word whose low bit
// `setp.ne.u32` makes the predicate; setp's predicate result is stored as 1
// or 0 through selp; 8-bit operands live in 16-bit registers, loaded as a
// byte, and an 8-bit result is stored as its low 8 bits.
TEST(RegisterModuleTest, PredicatesAndBytes) {
  EXPECT_EQ(OperandDeclarations(V("selp.b64")),
            "  .reg .b64 %src0;\n  .reg .b64 %src1;\n  .reg .pred %src2;\n"
            "  .reg .b32 %bit2;\n  .reg .b64 %dst;\n");
  EXPECT_EQ(RegisterBody(V("selp.b64")),
            "  mul.wide.u32 %slot, %i, 8;\n"
            "  add.u64 %slot, %out, %slot;\n"
            "  ld.global.u64 %src0, [%tuple+0];\n"
            "  ld.global.u64 %src1, [%tuple+8];\n"
            "  ld.global.u32 %bit2, [%tuple+16];\n"
            "  and.b32 %bit2, %bit2, 1;\n"
            "  setp.ne.u32 %src2, %bit2, 0;\n"
            "  selp.b64 %dst, %src0, %src1, %src2;\n"
            "  st.global.u64 [%slot], %dst;\n");
  EXPECT_EQ(OperandDeclarations(V("setp.lo.u16")),
            "  .reg .b16 %src0;\n  .reg .b16 %src1;\n  .reg .pred %dst;\n");
  EXPECT_EQ(RegisterBody(V("setp.lo.u16")),
            "  mul.wide.u32 %slot, %i, 8;\n"
            "  add.u64 %slot, %out, %slot;\n"
            "  ld.global.u16 %src0, [%tuple+0];\n"
            "  ld.global.u16 %src1, [%tuple+8];\n"
            "  setp.lo.u16 %dst, %src0, %src1;\n"
            "  selp.u64 %result, 1, 0, %dst;\n"
            "  st.global.u64 [%slot], %result;\n");
  EXPECT_EQ(OperandDeclarations(V("cvt.sat.s8.u8")),
            "  .reg .b16 %src0;\n  .reg .b16 %dst;\n");
  EXPECT_EQ(RegisterBody(V("cvt.sat.s8.u8")),
            "  mul.wide.u32 %slot, %i, 8;\n"
            "  add.u64 %slot, %out, %slot;\n"
            "  ld.global.u8 %src0, [%tuple+0];\n"
            "  cvt.sat.s8.u8 %dst, %src0;\n"
            "  cvt.u64.u8 %result, %dst;\n"
            "  st.global.u64 [%slot], %result;\n");
  EXPECT_THAT(RegisterBody(V("slct.u16.s32")),
              HasSubstr("  ld.global.u32 %src2, [%tuple+16];\n"
                        "  slct.u16.s32 %dst, %src0, %src1, %src2;\n"));
}

// CC.CF is set from the tuple's cf bit just before the instruction and read
// back just after it, by instructions of the variant's own kind; the flag
// word follows the result in a 16-byte slot.
TEST(RegisterModuleTest, CarriesAreSetAndReadAroundTheInstruction) {
  EXPECT_EQ(OperandDeclarations(V("addc.cc.u32")),
            "  .reg .b32 %src0;\n  .reg .b32 %src1;\n"
            "  .reg .b32 %src2, %cc_in;\n  .reg .b32 %dst;\n"
            "  .reg .b32 %cc_out;\n");
  EXPECT_EQ(RegisterBody(V("addc.cc.u32")),
            "  mul.wide.u32 %slot, %i, 16;\n"
            "  add.u64 %slot, %out, %slot;\n"
            "  ld.global.u32 %src0, [%tuple+0];\n"
            "  ld.global.u32 %src1, [%tuple+8];\n"
            "  ld.global.u32 %src2, [%tuple+16];\n"
            "  and.b32 %src2, %src2, 1;\n"
            "  add.cc.u32 %cc_in, %src2, 0xffffffff;\n"
            "  addc.cc.u32 %dst, %src0, %src1;\n"
            "  addc.u32 %cc_out, 0, 0;\n"
            "  cvt.u64.u32 %result, %dst;\n"
            "  st.global.u64 [%slot], %result;\n"
            "  cvt.u64.u32 %result, %cc_out;\n"
            "  st.global.u64 [%slot+8], %result;\n");
  // The sub kind: a borrow in, no flag out, 8-byte slots.
  EXPECT_EQ(RegisterBody(V("subc.u64")),
            "  mul.wide.u32 %slot, %i, 8;\n"
            "  add.u64 %slot, %out, %slot;\n"
            "  ld.global.u64 %src0, [%tuple+0];\n"
            "  ld.global.u64 %src1, [%tuple+8];\n"
            "  ld.global.u32 %src2, [%tuple+16];\n"
            "  and.b32 %src2, %src2, 1;\n"
            "  sub.cc.u32 %cc_in, 0, %src2;\n"
            "  subc.u64 %dst, %src0, %src1;\n"
            "  st.global.u64 [%slot], %dst;\n");
  // A borrow out, no carry in.
  EXPECT_THAT(RegisterBody(V("sub.cc.s32")),
              HasSubstr("  sub.cc.s32 %dst, %src0, %src1;\n"
                        "  subc.u32 %cc_out, 0, 0;\n"));
  EXPECT_THAT(RegisterBody(V("sub.cc.s32")), Not(HasSubstr("%cc_in")));
  EXPECT_EQ(ResultBytes(V("mad.hi.cc.s64")), 16);
  EXPECT_EQ(ResultBytes(V("madc.hi.s64")), 8);
}

TEST(ImmediateModuleTest, CarriesAreSetAndReadAroundTheInstruction) {
  // Tuple 1 of addc.cc.u32 with cf = 1: its result at out + 16, its flag
  // word at out + 24; cf is moved into a register, never an operand.
  EXPECT_EQ(ImmediateBody(V("addc.cc.u32"), {{0xffffffff, 0, 1}}, 1),
            "  // tuple 1: 0xffffffff 0x00000000 0x1\n"
            "  mov.b32 %src2, 0x1;\n"
            "  add.cc.u32 %cc_in, %src2, 0xffffffff;\n"
            "  addc.cc.u32 %dst, 0xffffffff, 0x00000000;\n"
            "  addc.u32 %cc_out, 0, 0;\n"
            "  cvt.u64.u32 %result, %dst;\n"
            "  st.global.u64 [%out+16], %result;\n"
            "  cvt.u64.u32 %result, %cc_out;\n"
            "  st.global.u64 [%out+24], %result;\n");
}

// The instruction under test is every line that writes %dst: read back by
// the parser, each is that variant, so the kernel runs what the request
// named. There is one, except lop3's body, which holds one per LUT value
// (the LUT must be an immediate), and the 2-lane SIMD video bodies, which
// hold one per canonical selector. No other line uses the family's opcode,
// except the store's widening of %dst into %result (cvt.u64.u16 in a cvt
// kernel, selp.u64 in a selp one), the result slot's address (add.u64
// %slot), CC.CF's setter and reader (%cc_in, %cc_out: addc.u32 %cc_out
// in an addc kernel) and a predicate source's load (setp.ne.u32 %src2 in a
// setp.lt.and kernel).
TEST(RegisterModuleTest, EveryInstructionParsesBackToItsVariant) {
  int checked = 0;
  for (const Variant& v : AllVariants()) {
    if (WhyUnsupported(v, 100, 90).has_value()) continue;
    const std::string opcode = absl::StrCat(InfoOf(v.family).opcode, ".");
    int instructions = 0;
    for (absl::string_view line : absl::StrSplit(RegisterBody(v), '\n')) {
      line = absl::StripLeadingAsciiWhitespace(line);
      const size_t space = line.find(' ');
      if (space == absl::string_view::npos) continue;  // labels
      const absl::string_view dest =
          line.substr(space + 1, line.find(',') - space - 1);
      const bool writes_dst = dest == "%dst" || absl::StartsWith(dest, "%dst.");
      if (!writes_dst) {
        if (absl::StartsWith(line, opcode) && dest == "%result") {
          ASSERT_TRUE(absl::StrContains(line, ", %dst;")) << line;
        } else if (absl::StartsWith(line, opcode)) {
          ASSERT_THAT(dest,
                      testing::AnyOf("%slot", "%cc_in", "%cc_out", "%src2"))
              << Spell(v) << ": " << line;
        }
        continue;  // loads, branches, the store
      }
      auto parsed = ParseVariant(absl::StrReplaceAll(line, {{"%", ""}}));
      ASSERT_TRUE(parsed.ok()) << line << ": " << parsed.status();
      ASSERT_EQ(*parsed, v)
          << line << " is " << Spell(*parsed) << ", not " << Spell(v);
      ++instructions;
    }
    // lop3: one per LUT value; 2-lane SIMD video: one per selector.
    const bool tree = v.family == Family::kLop3 || SimdLanes(v.family) == 2;
    ASSERT_EQ(instructions, tree ? 256 : 1) << Spell(v);
    ++checked;
  }
  EXPECT_GT(checked, 76300);
}

// A 2-lane SIMD register body dispatches on the selector's index to one
// instruction per canonical selector, each spelled in the text; a 4-lane
// one gathers the selected bytes with prmt and runs the instruction with
// the default selectors.
TEST(RegisterModuleTest, SimdVideoSelectors) {
  const Variant two = V("vsub2.s32.u32.s32.sat d.h1, a, b, c");
  std::set<uint32_t> selectors;
  for (absl::string_view line : absl::StrSplit(RegisterBody(two), '\n')) {
    if (!absl::StrContains(line, "vsub2.")) continue;
    const std::string text = absl::StrReplaceAll(line, {{"%", ""}, {";", ""}});
    const absl::StatusOr<uint32_t> sel = SpelledSimdSelector(two, text);
    ASSERT_TRUE(sel.ok()) << line;
    EXPECT_EQ(*sel & ~0x3333u, 0u) << line;
    selectors.insert(*sel);
  }
  EXPECT_EQ(selectors.size(), 256u);
  EXPECT_THAT(RegisterBody(two),
              HasSubstr("  and.b16 %selidx, %src3, 0x0003;\n"
                        "  shr.u16 %selpart, %src3, 2;\n"
                        "  and.b16 %selpart, %selpart, 0x000c;\n"));
  EXPECT_THAT(OperandDeclarations(two),
              HasSubstr(".reg .b16 %selidx, %selpart;"));
  const Variant four = V("vmax4.u32.s32.u32.add d.b21, a, b, c");
  EXPECT_THAT(RegisterBody(four),
              HasSubstr("  ld.global.u32 %src3, [%tuple+24];\n"
                        "  and.b32 %gsel, %src3, 0x7777;\n"
                        "  prmt.b32 %ga, %src0, %src1, %gsel;\n"
                        "  shr.b32 %gsel, %src3, 16;\n"
                        "  and.b32 %gsel, %gsel, 0x7777;\n"
                        "  prmt.b32 %gb, %src0, %src1, %gsel;\n"
                        "  vmax4.u32.s32.u32.add %dst.b21, %ga.b3210, "
                        "%gb.b7654, %src2;\n"));
}

// In immediate mode the selector is the tuple's, spelled on a and b.
TEST(ImmediateModuleTest, SimdVideoSelectorInTheText) {
  EXPECT_THAT(ImmediateBody(V("vadd4.u32.u32.u32"), {{1, 2, 3, 0x32107654}}, 0),
              HasSubstr("vadd4.u32.u32.u32 %dst, %src0.b7654, %src1.b3210, "
                        "%src2;"));
}

TEST(ImmediateModuleTest, ImmediatesWherePtxAllowsThem) {
  const Operands tuple = {{1, 0xffffffff}};
  EXPECT_EQ(ImmediateBody(V("add.s32"), tuple, 3),
            "  // tuple 3: 0x00000001 0xffffffff\n"
            "  add.s32 %dst, 0x00000001, 0xffffffff;\n"
            "  cvt.u64.u32 %result, %dst;\n"
            "  st.global.u64 [%out+24], %result;\n");
  // Operands are masked to their width, never truncated by ptxas.
  EXPECT_THAT(ImmediateBody(V("add.s16"), {{0x12345, 0xffffffffffff8000}}, 0),
              HasSubstr("add.s16 %dst, 0x2345, 0x8000;"));
  EXPECT_THAT(
      ImmediateBody(V("add.u64"), {{~0ull, 1ull << 63}}, 0),
      HasSubstr("add.u64 %dst, 0xffffffffffffffff, 0x8000000000000000;"));
}

TEST(ImmediateModuleTest, RegistersWherePtxWantsThem) {
  // bfe's position 300 is out of ptxas's immediate range: moved.
  const std::string bfe = ImmediateBody(V("bfe.u32"), {{5, 300, 4}}, 0);
  EXPECT_THAT(bfe, HasSubstr("mov.b32 %src1, 0x0000012c;"));
  EXPECT_THAT(bfe, HasSubstr("bfe.u32 %dst, 0x00000005, %src1, 0x00000004;"));
  EXPECT_TRUE(UsesImmediate(V("bfi.b32"), 2, 255));
  EXPECT_FALSE(UsesImmediate(V("bfi.b32"), 3, 256));
  // Packed operands and video operands are registers only.
  EXPECT_THAT(ImmediateBody(V("add.u16x2"), {{1, 2}}, 0),
              HasSubstr("add.u16x2 %dst, %src0, %src1;"));
  const std::string video =
      ImmediateBody(V("vadd.u32.u32.u32.sat d.b1, a, b.h0, c"), {{1, 2, 3}}, 0);
  EXPECT_THAT(video, HasSubstr("mov.b32 %src2, 0x00000003;"));
  EXPECT_THAT(
      video,
      HasSubstr("vadd.u32.u32.u32.sat %dst.b1, %src0, %src1.h0, %src2;"));
}

// A predicate source cannot be an immediate: setp.ne.u32 of its bit sets
// it. An 8-bit immediate has two hex digits.
TEST(ImmediateModuleTest, PredicatesAndBytes) {
  EXPECT_EQ(ImmediateBody(V("selp.u16"), {{0x1234, 0x15678, 3}}, 1),
            "  // tuple 1: 0x1234 0x5678 0x1\n"
            "  setp.ne.u32 %src2, 0x1, 0;\n"
            "  selp.u16 %dst, 0x1234, 0x5678, %src2;\n"
            "  cvt.u64.u16 %result, %dst;\n"
            "  st.global.u64 [%out+8], %result;\n");
  EXPECT_THAT(ImmediateBody(V("selp.u16"), {{1, 2, 2}}, 0),
              HasSubstr("  setp.ne.u32 %src2, 0x0, 0;\n"));
  EXPECT_EQ(ImmediateBody(V("setp.gt.s32"), {{0x80000000, 1}}, 0),
            "  // tuple 0: 0x80000000 0x00000001\n"
            "  setp.gt.s32 %dst, 0x80000000, 0x00000001;\n"
            "  selp.u64 %result, 1, 0, %dst;\n"
            "  st.global.u64 [%out+0], %result;\n");
  EXPECT_THAT(ImmediateBody(V("cvt.s32.s8"), {{0x180}}, 0),
              HasSubstr("  cvt.s32.s8 %dst, 0x80;\n"));
  EXPECT_THAT(ImmediateBody(V("cvt.u8.u64"), {{0x1234}}, 0),
              HasSubstr("  cvt.u64.u8 %result, %dst;\n"));
  EXPECT_FALSE(UsesImmediate(V("selp.b32"), 2, 1));
  EXPECT_TRUE(UsesImmediate(V("slct.b32.s32"), 2, 1));
}

TEST(ImmediateModuleTest, GroupsBecomeEntries) {
  std::vector<Operands> tuples(70);
  for (int i = 0; i < 70; ++i) tuples[i] = {{uint64_t(i), uint64_t(2 * i)}};
  const std::string module =
      ImmediateModule(V("sub.s32"), *TargetForDevice(80), tuples, 32);
  EXPECT_THAT(module, HasSubstr(".visible .entry ptxdiff_immediate_2(\n"));
  EXPECT_THAT(module, Not(HasSubstr("ptxdiff_immediate_3")));
  // The third entry holds tuples 64..69 at slots 0..5.
  const std::string third = module.substr(module.find("ptxdiff_immediate_2"));
  EXPECT_THAT(third, HasSubstr("// tuple 5: 0x00000045 0x0000008a"));
  EXPECT_THAT(third, HasSubstr("[%out+40]"));
  EXPECT_THAT(third, Not(HasSubstr("// tuple 6:")));
  EXPECT_THAT(module, HasSubstr(".version 7.0\n.target sm_80\n"));
}

}  // namespace
}  // namespace ptxdiff
