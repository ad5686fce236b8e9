// The kernel ABI of docs/kernel-abi.md against the generator, and the test
// interpreter (testing/register_kernel.h) against the oracle.

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptx_cmd/testing/register_kernel.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "isa/tuple.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// The target the ptx-cmd backend uses by default.
const PtxTarget kSm90 = *TargetForDevice(90);

Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

std::string InputOf(const std::vector<Operands>& tuples) {
  std::string in(tuples.size() * kTupleBytes, '\0');
  for (size_t i = 0; i < tuples.size(); ++i) {
    std::memcpy(in.data() + i * kTupleBytes, tuples[i].v, kTupleBytes);
  }
  return in;
}

uint64_t ResultAt(const std::string& out, size_t i) {
  uint64_t bits = 0;
  std::memcpy(&bits, out.data() + i * kResultBytes, kResultBytes);
  return bits;
}

// Runs `v`'s generated kernel on `tuples` in the interpreter.
absl::StatusOr<std::string> Interpret(
    const Variant& v, const std::vector<Operands>& tuples,
    const RegisterKernel::RunOptions& options = {}) {
  auto kernel = RegisterKernel::Parse(RegisterModule(v, kSm90));
  if (!kernel.ok()) return kernel.status();
  return kernel->Run(InputOf(tuples), options);
}

// Every non-video variant and every 40th video variant, with edge operands
// and more tuples than threads (so the grid-stride loop goes round), gives
// the oracle's bits in each tuple's slot.
TEST(RegisterKernelTest, GeneratedKernelsGiveTheOraclesResults) {
  std::mt19937_64 rng(7);
  std::vector<Operands> tuples(29);  // not a multiple of the 12 threads
  int checked = 0, video = 0, checked_carries = 0;
  for (const Variant& v : AllVariants()) {
    if (WhyUnsupported(v, 90, 90).has_value()) continue;
    const bool is_video = InfoOf(v.family).opcode[0] == 'v';
    if (is_video && video++ % 40 != 0) continue;
    FillEdgeTuples(v, rng, tuples);
    auto out = Interpret(v, tuples);
    ASSERT_TRUE(out.ok()) << Spell(v) << ": " << out.status();
    const int words = ResultBytes(v) / kResultBytes;
    ASSERT_EQ(out->size(), tuples.size() * ResultBytes(v));
    for (size_t i = 0; i < tuples.size(); ++i) {
      const Result want = Evaluate(v, tuples[i]);
      ASSERT_EQ(ResultAt(*out, words * i), want.bits)
          << Spell(v) << " tuple " << i;
      if (!HasCarryOut(v)) continue;
      const uint64_t set_word = CarryIsBorrow(v) ? 0xffffffffu : 1u;
      ASSERT_EQ(ResultAt(*out, words * i + 1), want.carry ? set_word : 0u)
          << Spell(v) << " tuple " << i << "'s flag word";
    }
    checked_carries += HasCarryOut(v) || HasCarryIn(v);
    ++checked;
  }
  EXPECT_GT(checked, 1000);
  EXPECT_EQ(checked_carries, 48);
}

// Kernel ABI 2: one batch module of every non-video variant and every 40th
// video variant, each with its own segment of tuples, run once: every tuple's
// 16-byte slot holds its variant's result and flag word (0 without `.cc`).
TEST(RegisterKernelTest, ABatchModuleGivesEveryVariantsResults) {
  std::mt19937_64 rng(11);
  std::vector<BatchSegment> segments;
  std::vector<Tuple> tuples;
  int video = 0;
  for (const Variant& v : AllVariants()) {
    if (WhyUnsupported(v, 90, 90).has_value()) continue;
    const bool is_video = InfoOf(v.family).opcode[0] == 'v';
    if (is_video && video++ % 40 != 0) continue;
    std::vector<Operands> ops(5 + segments.size() % 13);  // uneven segments
    FillEdgeTuples(v, rng, ops);
    segments.push_back({v, static_cast<uint32_t>(tuples.size()),
                        static_cast<uint32_t>(ops.size())});
    for (const Operands& o : ops) tuples.push_back({v, o});
  }
  std::vector<Operands> operands;
  for (const Tuple& t : tuples) operands.push_back(t.operands);
  const std::string module = BatchModule(segments, kSm90);
  EXPECT_THAT(module,
              HasSubstr(absl::StrCat("// ptxdiff batch: ", segments.size(),
                                     " variants, ", tuples.size(),
                                     " tuples; {out} holds 16 bytes per "
                                     "tuple\n")));
  auto kernel = RegisterKernel::Parse(module);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = kernel->Run(InputOf(operands), {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), tuples.size() * kBatchResultBytes);
  for (size_t i = 0; i < tuples.size(); ++i) {
    const Variant& v = tuples[i].variant;
    const Result want = Evaluate(v, tuples[i].operands);
    ASSERT_EQ(ResultAt(*out, 2 * i), want.bits) << Spell(v) << " tuple " << i;
    const uint64_t set_word = CarryIsBorrow(v) ? 0xffffffffu : 1u;
    ASSERT_EQ(ResultAt(*out, 2 * i + 1),
              HasCarryOut(v) && want.carry ? set_word : 0u)
        << Spell(v) << " tuple " << i << "'s flag word";
  }
  EXPECT_GT(segments.size(), 1000u);
}

// Segments run as written (operand forms): each tuple's runtime sources
// from the input buffer, the others immediates, run once by thread 0; every
// variant and every form gives the oracle's result, in a module with loop
// segments too.
TEST(RegisterKernelTest, WrittenSegmentsGiveEveryVariantsResults) {
  std::mt19937_64 rng(12);
  std::vector<BatchSegment> segments;
  std::vector<Tuple> tuples;
  int video = 0;
  for (const Variant& v : AllVariants()) {
    if (WhyUnsupported(v, 90, 90).has_value()) continue;
    const bool is_video = InfoOf(v.family).opcode[0] == 'v';
    if (is_video && video++ % 40 != 0) continue;
    std::vector<Operands> ops(4);
    FillEdgeTuples(v, rng, ops);
    const uint8_t capable = RuntimeCapableSources(v);
    BatchSegment segment{.variant = v,
                         .first = static_cast<uint32_t>(tuples.size()),
                         .count = static_cast<uint32_t>(ops.size())};
    for (size_t j = 0; j < ops.size(); ++j) {
      // All immediates, the lowest runtime source alone, all but it, all.
      const uint8_t lowest = capable & -capable;
      const uint8_t forms[] = {0, lowest, uint8_t(capable & ~lowest), capable};
      segment.written.push_back({v, ops[j], forms[j]});
      tuples.push_back(segment.written.back());
    }
    segments.push_back(std::move(segment));
    if (segments.size() % 7 == 0) {  // and a loop segment now and then
      segments.push_back({v, static_cast<uint32_t>(tuples.size()), 2});
      for (int j = 0; j < 2; ++j) tuples.push_back({v, ops[j], capable});
    }
  }
  std::vector<Operands> operands;
  for (const Tuple& t : tuples) operands.push_back(t.operands);
  auto kernel = RegisterKernel::Parse(BatchModule(segments, kSm90));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = kernel->Run(InputOf(operands), {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), tuples.size() * kBatchResultBytes);
  for (size_t i = 0; i < tuples.size(); ++i) {
    const Tuple& t = tuples[i];
    const Result want = Evaluate(t.variant, t.operands);
    ASSERT_EQ(ResultAt(*out, 2 * i), want.bits) << FormattedInstruction(t);
    const uint64_t set_word = CarryIsBorrow(t.variant) ? 0xffffffffu : 1u;
    ASSERT_EQ(ResultAt(*out, 2 * i + 1),
              HasCarryOut(t.variant) && want.carry ? set_word : 0u)
        << FormattedInstruction(t) << "'s flag word";
  }
  EXPECT_GT(segments.size(), 1000u);
}

// The interpreter's CC.CF is strict: read before it is set, or read by the
// other kind, is an error, so a generator that forgets the setter or reads
// a borrow as a carry fails here.
TEST(RegisterKernelTest, CarryFlagIsSetBeforeItIsReadAndReadByItsOwnKind) {
  const std::vector<Operands> tuples(3, Operands{{1, 2, 1}});
  const std::string good = RegisterModule(V("addc.u32"), kSm90);
  auto error = [&](const std::string& ptx) {
    auto kernel = RegisterKernel::Parse(ptx);
    if (!kernel.ok()) return std::string(kernel.status().message());
    auto out = kernel->Run(InputOf(tuples), {});
    return out.ok() ? std::string("ran") : std::string(out.status().message());
  };
  EXPECT_EQ(error(good), "ran");
  const std::string setter = "  add.cc.u32 %cc_in, %src2, 0xffffffff;\n";
  ASSERT_TRUE(absl::StrContains(good, setter));
  EXPECT_THAT(error(absl::StrReplaceAll(good, {{setter, ""}})),
              HasSubstr("reads CC.CF before anything set it"));
  EXPECT_THAT(error(absl::StrReplaceAll(
                  good, {{setter, "  sub.cc.u32 %cc_in, 0, %src2;\n"}})),
              HasSubstr("reads a borrow as a carry"));
}

// --wrong=addc.cc.u32: the instruction leaves CC.CF as the setter left it
// (its carry in); the bits stay right.
TEST(RegisterKernelTest, WrongCarryModeLeavesTheFlagOfThatVariantOnly) {
  const RegisterKernel::RunOptions wrong = {
      .carry_flag_unwritten = {V("addc.cc.u32")}};
  // 0xfffffffe + 1 + 1 = 0 with a carry out; the carry in was 1 too, so
  // only the second tuple (0xffffffff + 1 + 0: a carry out, carry in 0)
  // shows the bug.
  const std::vector<Operands> tuples = {{{0xfffffffe, 1, 1}},
                                        {{0xffffffff, 1, 0}}};
  auto out = Interpret(V("addc.cc.u32"), tuples, wrong);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ResultAt(*out, 0), 0u);  // the bits are right
  EXPECT_EQ(ResultAt(*out, 1), 1u);
  EXPECT_EQ(ResultAt(*out, 2), 0u);
  EXPECT_EQ(ResultAt(*out, 3), 0u);  // the carry is not
  auto right = Interpret(V("addc.cc.u32"), tuples);
  ASSERT_TRUE(right.ok());
  EXPECT_EQ(ResultAt(*right, 3), 1u);
  // Another variant keeps its carry in.
  auto other = Interpret(V("addc.cc.u64"), {{{~uint64_t{0}, 1, 0}}}, wrong);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(ResultAt(*other, 0), 0u);
  EXPECT_EQ(ResultAt(*other, 1), 1u);
}

// SIMD video through the interpreter: the 2-lane dispatch and the 4-lane
// prmt gather give the oracle's bits for any canonical selector.
TEST(RegisterKernelTest, SimdVideoKernelsGiveTheOraclesResults) {
  std::mt19937_64 rng(11);
  std::vector<Operands> tuples(48);
  for (const char* s :
       {"vadd2.u32.u32.u32", "vavrg2.s32.s32.u32.sat d.h0, a, b, c",
        "vset2.s32.u32.ge.add", "vabsdiff4.u32.s32.u32.add",
        "vmin4.s32.s32.s32.sat d.b320, a, b, c", "vset4.u32.s32.lt"}) {
    const Variant v = V(s);
    FillEdgeTuples(v, rng, tuples);
    for (size_t i = 0; i < tuples.size(); i += 2) {
      tuples[i].v[3] = rng() & SourceMask(v, 3);  // beside the defaults
    }
    auto out = Interpret(v, tuples);
    ASSERT_TRUE(out.ok()) << s << ": " << out.status();
    for (size_t i = 0; i < tuples.size(); ++i) {
      ASSERT_EQ(ResultAt(*out, i), Evaluate(v, tuples[i]).bits)
          << ReplayLine(v, tuples[i], Evaluate(v, tuples[i]));
    }
  }
}

// A batch module's loop branches only to the dispatch values its tuples
// hold (BatchSegment::dispatch_values): every 2-lane SIMD variant of a
// sample and lop3 give the oracle's results, in a module a fraction of the
// length of one that dispatches over all 256 values.
TEST(RegisterKernelTest, ALoopDispatchesOverTheValuesItsTuplesHold) {
  std::mt19937_64 rng(5);
  std::vector<BatchSegment> segments, everything;
  std::vector<Operands> operands;
  std::vector<Variant> variants;
  int simd = 0;
  for (const Variant& v : AllVariants()) {
    if (DispatchSource(v) < 0 || WhyUnsupported(v, 90, 90).has_value())
      continue;
    if (SimdLanes(v.family) == 2 && simd++ % 50 != 0) continue;
    // One tuple (a breadth pass's), or a few of several values.
    std::vector<Operands> ops(segments.size() % 2 == 0 ? 1 : 6);
    FillEdgeTuples(v, rng, ops);
    for (Operands& o : ops)
      o.v[DispatchSource(v)] = rng() & SourceMask(v, DispatchSource(v));
    BatchSegment segment{.variant = v,
                         .first = static_cast<uint32_t>(operands.size()),
                         .count = static_cast<uint32_t>(ops.size())};
    everything.push_back(segment);
    segment.dispatch_values = DispatchValuesOf(v, ops);
    ASSERT_LE(segment.dispatch_values.size(), ops.size());
    segments.push_back(segment);
    for (const Operands& o : ops) {
      operands.push_back(o);
      variants.push_back(v);
    }
  }
  ASSERT_GT(segments.size(), 10u);
  const std::string module = BatchModule(segments, kSm90);
  EXPECT_LT(module.size() * 10, BatchModule(everything, kSm90).size());
  auto kernel = RegisterKernel::Parse(module);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = kernel->Run(InputOf(operands), {});
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < operands.size(); ++i) {
    ASSERT_EQ(ResultAt(*out, 2 * i), Evaluate(variants[i], operands[i]).bits)
        << ReplayLine(variants[i], operands[i],
                      Evaluate(variants[i], operands[i]));
  }
}

TEST(RegisterKernelTest, ReadsTheKernelsStructure) {
  auto kernel = RegisterKernel::Parse(
      RegisterModule(V("vadd.u32.u32.u32.sat d.b1, a, b.h0, c"), kSm90));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->entry(), kRegisterEntry);
  ASSERT_EQ(kernel->params().size(), 3u);
  EXPECT_EQ(kernel->params()[0].name, "ptxdiff_in");
  EXPECT_EQ(kernel->params()[2].type, "u32");
  // The frame's arithmetic and the instruction under test, all through the
  // oracle; the last one is the variant.
  const std::vector<Variant> evaluated = kernel->OracleInstructions();
  ASSERT_FALSE(evaluated.empty());
  EXPECT_THAT(kernel->declared_variant(),
              ::testing::Optional(V("vadd.u32.u32.u32.sat d.b1, a, b.h0, c")));
  EXPECT_NE(std::find(evaluated.begin(), evaluated.end(),
                      V("vadd.u32.u32.u32.sat d.b1, a, b.h0, c")),
            evaluated.end());
}

TEST(RegisterKernelTest, AnyGridCoversEveryTuple) {
  const std::vector<Operands> tuples(50, Operands{{0x7fffffff, 1}});
  for (RegisterKernel::Grid grid :
       {RegisterKernel::Grid{1, 1}, {1, 64}, {7, 3}, {100, 100}}) {
    auto out = Interpret(V("add.sat.s32"), tuples, {.grid = grid});
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t i = 0; i < tuples.size(); ++i) {
      EXPECT_EQ(ResultAt(*out, i), 0x7fffffffu);
    }
  }
  auto none = Interpret(V("add.s32"), {});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, "");
}

TEST(RegisterKernelTest, WrongModeWrapsAddSatS32Only) {
  const RegisterKernel::RunOptions wrong = {
      .substitutions = {{V("add.sat.s32"), V("add.s32")}}};
  const std::vector<Operands> tuples = {{{0x7fffffff, 1}}, {{2, 3}}};
  auto sat = Interpret(V("add.sat.s32"), tuples, wrong);
  ASSERT_TRUE(sat.ok());
  EXPECT_EQ(ResultAt(*sat, 0), 0x80000000u);  // wrapped: the planted bug
  EXPECT_EQ(ResultAt(*sat, 1), 5u);
  auto plain = Interpret(V("add.sat.s32"), tuples);
  EXPECT_EQ(ResultAt(*plain, 0), 0x7fffffffu);
  auto other = Interpret(V("sub.sat.s32"), {{{0x80000000, 1}}}, wrong);
  EXPECT_EQ(ResultAt(*other, 0), 0x80000000u);  // still saturates
}

// A kernel that breaks the ABI, or PTX outside what ptxdiff writes, is an
// error naming what was found, never a guess.
TEST(RegisterKernelTest, FailsLoudlyOnWhatItDoesNotUnderstand) {
  const std::string good = RegisterModule(V("add.s32"), kSm90);
  const std::vector<Operands> tuples(5, Operands{{1, 2}});
  auto error = [&](const std::string& ptx) {
    auto kernel = RegisterKernel::Parse(ptx);
    if (!kernel.ok()) return std::string(kernel.status().message());
    auto out = kernel->Run(InputOf(tuples), {});
    return out.ok() ? std::string("ran") : std::string(out.status().message());
  };
  auto edit = [&](absl::string_view from, absl::string_view to) {
    EXPECT_TRUE(absl::StrContains(good, from)) << from;
    return absl::StrReplaceAll(good, {{from, to}});
  };
  EXPECT_EQ(error(good), "ran");
  EXPECT_THAT(error(edit("add.s32 %dst", "frob.s32 %dst")),
              HasSubstr("not a statement this interpreter knows"));
  EXPECT_THAT(
      error(edit("    .param .u32 ptxdiff_n)", "    .param .u64 ptxdiff_n)")),
      HasSubstr("the entry's parameters are (u64, u64, u64)"));
  EXPECT_THAT(error(edit("[%tuple+8]", "[%tuple+32]")),
              HasSubstr("load outside the input buffer"));
  EXPECT_THAT(error(edit("[%tuple+8]", "[%tuple+2]")),
              HasSubstr("misaligned load"));
  EXPECT_THAT(error(edit("  st.global.u64 [%slot], %result;\n", "")),
              HasSubstr("never stored byte 0 of tuple 0"));
  EXPECT_THAT(
      error(edit("mul.lo.u32 %stride, %stride, %t;", "mov.u32 %stride, 1;")),
      HasSubstr("a second store"));
  EXPECT_THAT(error(edit("  ret;\n", "$spin:\n  bra $spin;\n  ret;\n")),
              HasSubstr("without returning"));
  EXPECT_THAT(error(good + good), HasSubstr("one entry per module"));
  EXPECT_THAT(error(edit(".address_size 64", ".address_size 32")),
              HasSubstr("not a module directive"));
  EXPECT_THAT(
      error(edit("// ptxdiff variant: add.s32", "// ptxdiff variant: sub.s32")),
      HasSubstr("says it tests sub.s32 but no instruction is"));
  EXPECT_THAT(error(ImmediateModule(V("add.s32"), kSm90, tuples, 32)),
              HasSubstr("the entry's parameters are (u64)"));
}

// ---------------------------------------------------------------------------
// docs/kernel-abi.md

std::string AbiDoc() {
  auto doc = ReadFile(std::string(PTXDIFF_SOURCE_DIR) + "/docs/kernel-abi.md");
  EXPECT_TRUE(doc.ok()) << doc.status();
  return doc.value_or("");
}

// The fenced block that follows the line `<!-- marker -->`.
std::string BlockAfter(const std::string& doc, absl::string_view marker) {
  const size_t at = doc.find(absl::StrCat("<!-- ", marker, " -->"));
  if (at == std::string::npos) return "";
  const size_t open = doc.find("```", at);
  const size_t body = doc.find('\n', open) + 1;
  const size_t close = doc.find("\n```", body);
  return doc.substr(body, close + 1 - body);
}

// "0000: 01 02 ..." lines (an offset, then hex bytes) as bytes.
std::string HexDump(const std::string& text) {
  std::string bytes;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    line = line.substr(line.find(':') + 1);
    for (absl::string_view byte :
         absl::StrSplit(line, ' ', absl::SkipEmpty())) {
      uint32_t value = 0;
      EXPECT_TRUE(absl::SimpleHexAtoi(byte, &value)) << line;
      bytes.push_back(static_cast<char>(value));
    }
  }
  return bytes;
}

// The ABI 2 example: add.sat.s32 on tuples 0..1, addc.cc.u32 on tuple 2.
const std::vector<BatchSegment> kExampleBatch = {
    {.variant = V("add.sat.s32"), .first = 0, .count = 2},
    {.variant = V("addc.cc.u32"), .first = 2, .count = 1}};

TEST(KernelAbiDocTest, TheExampleBatchModuleIsWhatTheGeneratorWrites) {
  const std::string example = BlockAfter(AbiDoc(), "example-batch-module");
  ASSERT_FALSE(example.empty());
  EXPECT_EQ(example, BatchModule(kExampleBatch, kSm90));
}

TEST(KernelAbiDocTest, TheExampleBatchBuffersAreWhatTheKernelReadsAndWrites) {
  const std::string doc = AbiDoc();
  const std::string in = HexDump(BlockAfter(doc, "example-batch-in"));
  const std::string out = HexDump(BlockAfter(doc, "example-batch-out"));
  ASSERT_EQ(in.size(), 3u * kTupleBytes);
  auto kernel = RegisterKernel::Parse(BatchModule(kExampleBatch, kSm90));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto ran = kernel->Run(in, {});
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(*ran, out);
}

// The written example: bfe.s32 with `a` a runtime value and pos 40, len 8
// immediates, then all three immediates.
BatchSegment ExampleWrittenSegment() {
  const Variant v = V("bfe.s32");
  return {.variant = v,
          .first = 0,
          .count = 2,
          .written = {{v, {{0x12345678, 40, 8}}, 0b001},
                      {v, {{0x80000000, 31, 1}}, 0}}};
}

TEST(KernelAbiDocTest, TheExampleWrittenModuleIsWhatTheGeneratorWrites) {
  const std::string example = BlockAfter(AbiDoc(), "example-written-module");
  const std::vector<BatchSegment> segments = {ExampleWrittenSegment()};
  ASSERT_FALSE(example.empty());
  EXPECT_EQ(example, BatchModule(segments, kSm90));
}

TEST(KernelAbiDocTest, TheExampleWrittenBuffersAreWhatTheKernelReadsAndWrites) {
  const std::string doc = AbiDoc();
  const std::string in = HexDump(BlockAfter(doc, "example-written-in"));
  const std::string out = HexDump(BlockAfter(doc, "example-written-out"));
  ASSERT_EQ(in.size(), 2u * kTupleBytes);
  const std::vector<BatchSegment> segments = {ExampleWrittenSegment()};
  auto kernel = RegisterKernel::Parse(BatchModule(segments, kSm90));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto ran = kernel->Run(in, {});
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(*ran, out);
}

TEST(KernelAbiDocTest, TheExampleModuleIsWhatTheGeneratorWrites) {
  const std::string example = BlockAfter(AbiDoc(), "example-module");
  ASSERT_FALSE(example.empty());
  EXPECT_EQ(example, RegisterModule(V("add.sat.s32"), kSm90));
  // The entry's signature as the doc states it.
  EXPECT_THAT(example,
              HasSubstr(absl::StrCat(".visible .entry ", kRegisterEntry,
                                     "(\n"
                                     "    .param .u64 ptxdiff_in,\n"
                                     "    .param .u64 ptxdiff_out,\n"
                                     "    .param .u32 ptxdiff_n)\n")));
}

TEST(KernelAbiDocTest, TheExampleBuffersAreWhatTheKernelReadsAndWrites) {
  const std::string doc = AbiDoc();
  const std::string in = HexDump(BlockAfter(doc, "example-in"));
  const std::string out = HexDump(BlockAfter(doc, "example-out"));
  ASSERT_EQ(in.size(), 2u * kTupleBytes);
  ASSERT_EQ(out.size(), 2u * kResultBytes);
  auto kernel = RegisterKernel::Parse(RegisterModule(V("add.sat.s32"), kSm90));
  ASSERT_TRUE(kernel.ok());
  auto ran = kernel->Run(in, {});
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(*ran, out);
  // And the oracle agrees with the documented results.
  Operands first, second;
  std::memcpy(first.v, in.data(), kTupleBytes);
  std::memcpy(second.v, in.data() + kTupleBytes, kTupleBytes);
  EXPECT_EQ(ResultAt(out, 0), Evaluate(V("add.sat.s32"), first).bits);
  EXPECT_EQ(ResultAt(out, 1), Evaluate(V("add.sat.s32"), second).bits);
}

TEST(KernelAbiDocTest, TheCarryExampleModuleIsWhatTheGeneratorWrites) {
  const std::string example = BlockAfter(AbiDoc(), "example-carry-module");
  ASSERT_FALSE(example.empty());
  EXPECT_EQ(example, RegisterModule(V("addc.cc.u32"), kSm90));
}

TEST(KernelAbiDocTest, TheCarryExampleBuffersAreWhatTheKernelReadsAndWrites) {
  const std::string doc = AbiDoc();
  const std::string in = HexDump(BlockAfter(doc, "example-carry-in"));
  const std::string out = HexDump(BlockAfter(doc, "example-carry-out"));
  ASSERT_EQ(in.size(), 2u * kTupleBytes);
  ASSERT_EQ(out.size(), 2u * kCarryResultBytes);
  auto kernel = RegisterKernel::Parse(RegisterModule(V("addc.cc.u32"), kSm90));
  ASSERT_TRUE(kernel.ok());
  auto ran = kernel->Run(in, {});
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(*ran, out);
  // The oracle agrees with the documented results and carries.
  for (size_t i = 0; i < 2; ++i) {
    Operands tuple;
    std::memcpy(tuple.v, in.data() + i * kTupleBytes, kTupleBytes);
    const Result r = Evaluate(V("addc.cc.u32"), tuple);
    EXPECT_EQ(ResultAt(out, 2 * i), r.bits);
    EXPECT_EQ(ResultAt(out, 2 * i + 1), r.carry ? 1u : 0u);
  }
}

TEST(KernelAbiDocTest, StatesTheSizesTheGeneratorUses) {
  const std::string doc = AbiDoc();
  EXPECT_EQ(kTupleBytes, 32);
  EXPECT_EQ(kResultBytes, 8);
  EXPECT_EQ(kCarryResultBytes, 16);
  EXPECT_THAT(doc, HasSubstr("32 bytes per tuple"));
  EXPECT_THAT(doc, HasSubstr("8 bytes per tuple"));
  EXPECT_THAT(doc, HasSubstr("16 bytes per tuple"));
  EXPECT_THAT(doc, HasSubstr(absl::StrCat("`", kRegisterEntry, "`")));
}

}  // namespace
}  // namespace ptxdiff
