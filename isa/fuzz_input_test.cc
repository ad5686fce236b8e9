#include "isa/fuzz_input.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

TEST(FuzzInputTest, RoundTripsEveryFamily) {
  for (const FamilyInfo& f : AllFamilies()) {
    Variant v;
    bool found = false;
    ForEachVariant(f.family, [&](const Variant& x) {
      if (!found) v = x, found = true;
    });
    const std::vector<Operands> ops = {{{1, 2, 3, 4}}, {{~0ull, 0, 7, 9}}};
    auto tuples = DecodeFuzzInput(EncodeFuzzInput(v, ops));
    ASSERT_TRUE(tuples.ok()) << f.opcode << ": " << tuples.status();
    ASSERT_EQ(tuples->size(), 2u);
    EXPECT_EQ((*tuples)[0].variant, v);
    EXPECT_EQ((*tuples)[1].operands.v[0], ~0ull >> (64 - SourceWidth(v, 0)));
  }
}

TEST(FuzzInputTest, FormsRoundTripAndAllImmediateInputsKeepTheOldBytes) {
  const Variant v = *ParseVariant("bfe.s32");
  const std::vector<Tuple> forms = {{v, {{1, 40, 8}}, 0b001},
                                    {v, {{2, 3, 4}}, 0}};
  const std::string bytes = EncodeFuzzInput(forms);
  auto back = DecodeFuzzInput(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, forms);
  EXPECT_EQ(bytes.size(), 8 + 8 + 2 * (1 + 3 * 8));
  const std::vector<Tuple> immediates = {{v, {{1, 40, 8}}}};
  EXPECT_EQ(EncodeFuzzInput(immediates), EncodeFuzzInput(v, {{{1, 40, 8}}}));
}

TEST(FuzzInputTest, AFormByteKeepsOnlySourcesThatMayBeRuntime) {
  // lop3's immLut (source 3) must be an immediate: a mutated byte that asks
  // for it, or for a source lop3 lacks, decodes without those bits.
  const Variant v = *ParseVariant("lop3.b32");
  std::string bytes = EncodeFuzzInput({{v, {{1, 2, 3, 0x80}}, 0b0001}});
  bytes[16] = static_cast<char>(0xff);
  auto back = DecodeFuzzInput(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)[0].runtime, 0b0111);
}

// An input without forms runs in the worker's default form: every source
// that may be a runtime value one, for a worker that runs code. An input
// with forms keeps them, all-immediate tuples included.
TEST(FuzzInputTest, AnInputWithoutFormsTakesTheDefaultForm) {
  const Variant lop3 = *ParseVariant("lop3.b32");
  const std::string untagged = EncodeFuzzInput(lop3, {{{1, 2, 3, 0x80}}});
  EXPECT_FALSE(FuzzInputHasForms(untagged));
  auto runtime =
      DecodeFuzzInputInDefaultForm(untagged, /*runtime_by_default=*/true);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_EQ((*runtime)[0].runtime, 0b0111);  // never the immLut
  auto immediate = DecodeFuzzInputInDefaultForm(untagged, false);
  ASSERT_TRUE(immediate.ok());
  EXPECT_EQ((*immediate)[0].runtime, 0);
  const std::vector<Tuple> given = {{lop3, {{1, 2, 3, 0x80}}, 0b0010},
                                    {lop3, {{4, 5, 6, 0x80}}, 0}};
  const std::string tagged = EncodeFuzzInput(given);
  EXPECT_TRUE(FuzzInputHasForms(tagged));
  auto kept = DecodeFuzzInputInDefaultForm(tagged, true);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, given);
}

TEST(FuzzInputTest, TheFormsTagIsNoVariantsId) {
  for (const FamilyInfo& f : AllFamilies()) {
    ForEachVariant(f.family, [&](const Variant& x) {
      ASSERT_NE(StableId(x), kFuzzInputFormsTag) << Spell(x);
    });
  }
}

TEST(FuzzInputTest, BadInputsNameTheProblem) {
  EXPECT_THAT(DecodeFuzzInput("abc").status().message(),
              HasSubstr("truncated"));
  EXPECT_THAT(DecodeFuzzInput(std::string(24, 'x')).status().message(),
              HasSubstr("names no known variant"));
  const std::string only_id = EncodeFuzzInput(*ParseVariant("add.s32"), {});
  EXPECT_THAT(DecodeFuzzInput(only_id + "1234").status().message(),
              HasSubstr("16 needed for one tuple"));
  const std::string tagged =
      EncodeFuzzInput({{*ParseVariant("add.s32"), {{1, 2}}, 0b01}});
  EXPECT_THAT(DecodeFuzzInput(tagged.substr(0, 12)).status().message(),
              HasSubstr("truncated"));
  EXPECT_THAT(DecodeFuzzInput(tagged.substr(0, 20)).status().message(),
              HasSubstr("17 needed for one tuple"));
}

// Corpus inputs main's c87fd0f wrote (isa/testdata/c87fd0f/differential, a
// 40 s `fuzz` on ptxas) decode as that version decoded them: EXPECTED holds,
// a line a file, its variant and tuple count as c87fd0f's `ptxdiff repro
// FILE --backend oracle` said them (issue 63, item 5: corpora of earlier
// versions are read).
TEST(FuzzInputTest, ACorpusOfC87fd0fDecodesAsItDid) {
  const std::string dir =
      PTXDIFF_SOURCE_DIR "/isa/testdata/c87fd0f/differential/";
  std::ifstream expected(dir + "EXPECTED");
  std::string line;
  int files = 0;
  while (std::getline(expected, line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, '\t');
    ASSERT_EQ(fields.size(), 3u) << line;
    std::ifstream in(dir + fields[0], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    auto tuples = DecodeFuzzInputInDefaultForm(bytes, false);
    ASSERT_TRUE(tuples.ok()) << fields[0] << ": " << tuples.status();
    ASSERT_FALSE(tuples->empty()) << fields[0];
    EXPECT_EQ(Spell(tuples->front().variant), fields[1]) << fields[0];
    EXPECT_EQ(std::to_string(tuples->size()), fields[2]) << fields[0];
    ++files;
  }
  EXPECT_EQ(files, 16);
}

}  // namespace
}  // namespace ptxdiff
