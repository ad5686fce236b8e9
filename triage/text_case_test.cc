#include "triage/text_case.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_constants.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "triage/repro_ptx.h"
#include "triage/testing/findings.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

Finding AFinding() {
  Finding f;
  f.tuple = {*ParseVariant("vadd.u32.u32.u32.sat d.b1, a, b, c"),
             {{0x100, 0, 0x11223344, 0}}};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend_bits = f.oracle.bits ^ 1;
  f.backend = "ptxas";
  f.backend_identity = "ptxas 1 (ptxas 13.0, sm_90)";
  return f;
}

TEST(TextCaseTest, FormatIsReadableAndParsesBack) {
  const std::string text = FormatTextCase(AFinding());
  EXPECT_EQ(text,
            "# ptxdiff case 1\n"
            "variant: vadd.u32.u32.u32.sat d.b1, a, b, c\n"
            "operands: 0x00000100 0x00000000 0x11223344\n"
            "oracle: 0x1122ff44 defined\n"
            "backend: ptxas 1 (ptxas 13.0, sm_90)\n"
            "backend-result: 0x1122ff45\n"
            "differing-bits: 0x00000001\n"
            "kind: value-mismatch\n");
  auto tuple = ParseTextCase(text);
  ASSERT_TRUE(tuple.ok()) << tuple.status();
  EXPECT_EQ(tuple->variant, AFinding().tuple.variant);
  EXPECT_EQ(tuple->operands.v[2], 0x11223344u);
}

// A case with runtime sources names them; the operands are their witness.
TEST(TextCaseTest, RuntimeSourcesAreNamedAndParseBack) {
  Finding f = AFinding();
  f.tuple = {*ParseVariant("bfe.s32"), {{1, 40, 8}}, 0b001};
  const std::string text = FormatTextCase(f);
  EXPECT_THAT(
      text, HasSubstr("operands: 0x00000001 0x00000028 0x00000008\n"
                      "runtime: a\n"
                      "instruction: bfe.s32 d, %a, 0x00000028, 0x00000008\n"));
  auto tuple = ParseTextCase(text);
  ASSERT_TRUE(tuple.ok()) << tuple.status();
  EXPECT_EQ(*tuple, f.tuple);
  EXPECT_THAT(
      ParseTextCase("variant: lop3.b32\noperands: 1 2 3 4\nruntime: immLut\n")
          .status()
          .message(),
      HasSubstr(
          "line 3: source 'immLut' of lop3.b32 cannot be a runtime value"));
}

// A carry-only mismatch of a `.cc` variant: both carries in the case.
TEST(TextCaseTest, ACarryOnlyMismatchShowsBothCarries) {
  Finding f = AFinding();
  f.tuple = {*ParseVariant("sub.cc.u32"), {{0, 1, 0, 0}}};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend_bits = f.oracle.bits;
  f.backend_carry = false;
  EXPECT_EQ(FormatTextCase(f),
            "# ptxdiff case 1\n"
            "variant: sub.cc.u32\n"
            "operands: 0x00000000 0x00000001\n"
            "oracle: 0xffffffff cf=1 defined\n"
            "backend: ptxas 1 (ptxas 13.0, sm_90)\n"
            "backend-result: 0xffffffff cf=0\n"
            "differing-bits: 0x00000000\n"
            "differing-carry: 1\n"
            "kind: value-mismatch\n");
  auto tuple = ParseTextCase(FormatTextCase(f));
  ASSERT_TRUE(tuple.ok()) << tuple.status();
  EXPECT_EQ(tuple->variant, f.tuple.variant);
  // The carry-in is an operand like the others.
  f.tuple = {*ParseVariant("addc.u32"), {{0xffffffff, 0, 1, 0}}};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  auto addc = ParseTextCase(FormatTextCase(f));
  ASSERT_TRUE(addc.ok()) << addc.status();
  EXPECT_EQ(addc->operands.v[2], 1u);
}

// Issue 28, item 8: triage/README.md says only variant and operands are
// needed, but a case without the header was "not a text case".
TEST(TextCaseTest, AHandWrittenCaseNeedsNoHeader) {
  const std::string hand_written = "variant: add.s32\noperands: 0x7fffffff 1\n";
  EXPECT_TRUE(LooksLikeTextCase(hand_written));
  auto tuple = ParseTextCase(hand_written);
  ASSERT_TRUE(tuple.ok()) << tuple.status();
  EXPECT_EQ(tuple->variant, *ParseVariant("add.s32"));
  EXPECT_EQ(tuple->operands.v[0], 0x7fffffffu);
  EXPECT_EQ(tuple->operands.v[1], 1u);
  // A comment first, indented keys, CRLF line ends.
  EXPECT_TRUE(
      ParseTextCase("# mine\r\n  variant: add.s32\r\n  operands: 1 2\r\n")
          .ok());
  // A crash file's bytes (a variant id first) are not a text case.
  EXPECT_FALSE(LooksLikeTextCase(
      std::string("\x12\x34\x56\x78\x9a\xbc\xde\xf0variant:", 16)));
  EXPECT_FALSE(LooksLikeTextCase("just some text\n"));
}

TEST(TextCaseTest, BadCasesNameTheProblem) {
  EXPECT_THAT(ParseTextCase("variant: add.s32\n").status().message(),
              HasSubstr("needs 'variant:' and 'operands:'"));
  EXPECT_THAT(
      ParseTextCase("# ptxdiff case 1\nvariant: add.s32\n").status().message(),
      HasSubstr("needs 'variant:' and 'operands:'"));
  EXPECT_THAT(
      ParseTextCase("# ptxdiff case 1\nvariant: add.s33\noperands: 1 2\n")
          .status()
          .message(),
      HasSubstr("line 2: unknown instruction variant 'add.s33'"));
  EXPECT_THAT(ParseTextCase("# ptxdiff case 1\nvariant: add.s16\noperands: 1\n")
                  .status()
                  .message(),
              HasSubstr("line 3: add.s16 takes 2 operands, the case gives 1"));
  EXPECT_THAT(
      ParseTextCase("# ptxdiff case 1\nvariant: add.s16\noperands: 1 0x10000\n")
          .status()
          .message(),
      HasSubstr("operand b: '0x10000' does not fit in 16 bits"));
  EXPECT_THAT(
      ParseTextCase("# ptxdiff case 1\nvariant add.s16\n").status().message(),
      HasSubstr("line 2: expected 'key: value'"));
}

// The reproducer assembles with the public ptxas.
// Issue 28: the case of an unisolated fault held only the batch's first
// tuple, so replaying it replayed an innocent tuple. It holds every tuple
// of the batch, in order, and parses back to all of them.
TEST(TextCaseTest, ACaseOfABatchHoldsEveryTupleInOrder) {
  Finding f = AnUnisolatedHangOfABatch();
  const std::string text = FormatTextCase(f);
  EXPECT_THAT(text, HasSubstr("batch: 3 tuples"));
  auto tuples = ParseTextCaseTuples(text);
  ASSERT_TRUE(tuples.ok()) << tuples.status() << "\n" << text;
  EXPECT_EQ(*tuples, f.batch);
  // One tuple's case is one tuple, as ParseTextCase reads it.
  f.unisolated = false;
  tuples = ParseTextCaseTuples(FormatTextCase(f));
  ASSERT_TRUE(tuples.ok()) << tuples.status();
  EXPECT_EQ(*tuples, std::vector<Tuple>{f.tuple});
  // An error names its line in the whole case.
  auto bad = ParseTextCaseTuples(
      "variant: add.s32\noperands: 1 2\nvariant: add.s32\noperands: 1\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("line 4: add.s32 takes 2 operands"));
}

// Seventh fault run of issue 65: each tuple of a batch's case was parsed
// with every line before it, so a case of n tuples cost n^2 lines: the case
// of an unisolated batch of ~11,700 tuples (a worker that answers garbage)
// took 4.7 s in `triage list`, and `fuzz --max-time 15` ran 88 s to over
// 120 s filing such cases.
// This case of 2^17 tuples (the ptxas backend's batch is 4,096, a GPU's
// 2^20) was hours that way; its errors still name the line of the whole.
TEST(TextCaseTest, AHugeBatchsCaseParsesInOnePass) {
  Finding f = AnUnisolatedHangOfABatch();
  const Tuple sat = f.batch[1];
  f.batch.assign(1 << 17, sat);
  for (size_t i = 0; i < f.batch.size(); ++i) f.batch[i].operands.v[1] = i;
  f.tuple = f.batch[0];
  std::string text = FormatTextCase(f);
  auto tuples = ParseTextCaseTuples(text);
  ASSERT_TRUE(tuples.ok()) << tuples.status();
  EXPECT_EQ(*tuples, f.batch);
  // The last tuple's operands line, spoiled.
  text.insert(text.rfind("operands: ") + 10, "zz");
  const size_t at = text.rfind("operands: ");
  const size_t line = std::count(text.begin(), text.begin() + at, '\n') + 1;
  auto bad = ParseTextCaseTuples(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr(absl::StrCat("line ", line, ", operand a")));
}

// Sixth fault run: a case with a second `variant:` line after its
// `operands:` line was "a text case needs 'variant:' and 'operands:'
// lines", though it has both. The second `variant:` line is named.
TEST(TextCaseTest, ASecondVariantLineWithoutOperandsIsNamed) {
  auto bad = ParseTextCaseTuples(
      "# ptxdiff case 1\nvariant: add.s32\noperands: 1 2\nvariant: sub.s32\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("a second 'variant:' line (line 4) with no "
                        "'operands:' line after it"));
  bad = ParseTextCaseTuples(
      "variant: add.s32\nvariant: sub.s32\noperands: 1 2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("line 1: a 'variant:' line with no 'operands:' line "
                        "before a second 'variant:' line (line 2)"));
}

// Sixth fault run: a case an editor saved with a BOM was read as a crash
// file ("fuzz input names no known variant (id 0x7874702023bfbbef)"),
// where a program case's BOM is taken. It is taken here too.
TEST(TextCaseTest, AByteOrderMarkBeforeTheCaseIsTaken) {
  const std::string bom = "\xef\xbb\xbf";
  const Finding f = AFinding();
  for (const std::string& text :
       {bom + FormatTextCase(f),
        bom + "variant: vadd.u32.u32.u32.sat d.b1, a, b, c\n"
              "operands: 0x100 0 0x11223344\n"}) {
    EXPECT_TRUE(LooksLikeTextCase(text)) << text;
    auto tuples = ParseTextCaseTuples(text);
    ASSERT_TRUE(tuples.ok()) << tuples.status() << "\n" << text;
    EXPECT_EQ(*tuples, std::vector<Tuple>{f.tuple});
    auto one = ParseTextCase(text);
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ(*one, f.tuple);
  }
}

TEST(ReproPtxTest, Assembles) {
  const char* ptxas = "/usr/local/cuda/bin/ptxas";
  if (access(ptxas, X_OK) != 0) GTEST_SKIP() << "no ptxas at " << ptxas;
  for (const char* s : {"vadd.u32.u32.u32.sat d.b1, a, b, c",
                        "mad.wide.s16",
                        "mul.wide.u32",
                        "bfi.b64",
                        "add.u16x2",
                        "vmad.s32.u32.s32.sat.shr15 d, -a.b1, b, c",
                        "popc.b64",
                        "setp.lo.u64",
                        "selp.b16",
                        "slct.s64.s32",
                        "cvt.sat.s8.u64",
                        "cvt.s32.u8",
                        "add.cc.u32",
                        "sub.cc.s64",
                        "addc.cc.u64",
                        "subc.u32",
                        "madc.hi.cc.s32",
                        "mad.lo.cc.u64",
                        "lop3.b32",
                        "vadd2.s32.u32.s32.sat d.h1, a, b, c",
                        "vset4.u32.s32.ge.add d.b310, a, b, c",
                        "vavrg4.u32.u32.u32"}) {
    const Tuple t{*ParseVariant(s), {{1, 2, 3, 4}}};
    const std::string path = ::testing::TempDir() + "/repro.ptx";
    std::ofstream(path) << ReproPtx(t);
    const std::string cmd = std::string(ptxas) + " -arch=sm_90 " + path +
                            " -o " + ::testing::TempDir() + "/repro.cubin 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << s << "\n" << ReproPtx(t);
  }
}

// The reproducer of the runtime-source bfe claim (issue 29) is miscompiled
// by the public ptxas as described: its kernel reduces to one store of the
// constant 0xffffffff, whatever `a` is, where the oracle says 0 for a = 0.
TEST(ReproPtxTest, StockPtxasStoresTheClaimedConstantForARuntimeSource) {
  auto ptxas = FindPtxas({});
  if (!ptxas.ok()) GTEST_SKIP() << ptxas.status().message();
  const Tuple bfe{*ParseVariant("bfe.s32"), {{0, 32, 1}}, 0b001};
  EXPECT_EQ(Evaluate(bfe.variant, bfe.operands).bits, 0u);
  auto out = RunPtxas(*ptxas, "sm_90", ReproPtx(bfe, 90));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->ok) << out->log;
  auto elf = ParseElf(out->cubin);
  ASSERT_TRUE(elf.ok()) << elf.status();
  auto texts = KernelTexts(*elf);
  ASSERT_TRUE(texts.ok()) << texts.status();
  ASSERT_TRUE(texts->contains("repro"));
  auto stores =
      DecodeConstantStores(*FindSassArch("sm_90"), texts->at("repro"));
  ASSERT_TRUE(stores.ok()) << stores.status();
  ASSERT_EQ(stores->size(), 1u);
  EXPECT_EQ((*stores)[0].size, 4);
  EXPECT_EQ((*stores)[0].Low64(), 0xffffffffu);
}

// Runtime sources are the kernel's parameters, loaded where the immediates
// are moved; it assembles for every width, a predicate's included.
TEST(ReproPtxTest, RuntimeSourcesAreParameters) {
  const Tuple bfe{*ParseVariant("bfe.s32"), {{1, 40, 8}}, 0b001};
  const std::string ptx = ReproPtx(bfe);
  EXPECT_THAT(ptx, HasSubstr(".entry repro(.param .u64 out, .param .b32 a)"));
  EXPECT_THAT(ptx, HasSubstr("ld.param.b32 %r1, [a];"));
  EXPECT_THAT(ptx, HasSubstr("mov.b32 %r2, 0x00000028;"));
  EXPECT_THAT(ptx, HasSubstr("oracle's answer is for a = 0x00000001"));
  const char* ptxas = "/usr/local/cuda/bin/ptxas";
  if (access(ptxas, X_OK) != 0) GTEST_SKIP() << "no ptxas at " << ptxas;
  for (const Tuple& t :
       {bfe, Tuple{*ParseVariant("selp.b16"), {{1, 2, 1}}, 0b111},
        Tuple{*ParseVariant("cvt.sat.s8.u64"), {{300}}, 0b1},
        Tuple{*ParseVariant("addc.cc.u64"), {{1, 2, 1}}, 0b011},
        Tuple{*ParseVariant("lop3.b32"), {{1, 2, 3, 0x96}}, 0b0111}}) {
    const std::string path = ::testing::TempDir() + "/repro_runtime.ptx";
    std::ofstream(path) << ReproPtx(t);
    const std::string cmd = std::string(ptxas) + " -arch=sm_90 " + path +
                            " -o " + ::testing::TempDir() +
                            "/repro_runtime.cubin 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << Spell(t.variant) << "\n"
                                           << ReproPtx(t);
  }
}

}  // namespace
}  // namespace ptxdiff
