// Replays oracle/testdata/known_answers.txt through both oracles: the seeds'
// worked examples and hand-derived corner cases of every family.
// Each line is "spelling | operands | expected | definedness [flag]"; the
// flag token ("carry=0|1", or "borrow=0|1" for sub.cc/subc.cc) is there
// exactly for the variants with `.cc` and is compared with Result::carry.

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/literal/literal_oracle.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

struct KnownAnswer {
  int line;
  std::string spelling;
  Variant variant;
  Operands operands;
  uint64_t expected;
  std::string definedness;  // "defined" or a reason token
  bool carry = false;       // the outgoing CC.CF (Result::carry)
};

// True for the extended-precision instructions whose CC.CF is a borrow:
// sub.cc and subc (PTX ISA 9.7.2). Their flag token is "borrow=", the other
// `.cc` variants' is "carry=".
bool IsBorrowKind(const Variant& v) {
  return v.family == Family::kSub || v.family == Family::kSubc;
}

// The last field: the definedness token, then, for a variant with `.cc`
// only, "carry=0|1" or "borrow=0|1" (the outgoing CC.CF).
void ParseOutcome(const std::string& field, int number, KnownAnswer& ka) {
  std::vector<std::string> tokens =
      absl::StrSplit(field, ' ', absl::SkipEmpty());
  EXPECT_FALSE(tokens.empty()) << "line " << number;
  if (tokens.empty()) return;
  ka.definedness = tokens[0];
  const bool has_flag = HasCarryOut(ka.variant);
  EXPECT_EQ(tokens.size(), has_flag ? 2u : 1u)
      << "line " << number << ": a `.cc` variant needs exactly one "
      << "carry=/borrow= token after the definedness, any other none";
  if (!has_flag || tokens.size() != 2) return;
  const std::string name = IsBorrowKind(ka.variant) ? "borrow=" : "carry=";
  EXPECT_TRUE(tokens[1] == name + "0" || tokens[1] == name + "1")
      << "line " << number << ": expected " << name << "0 or " << name
      << "1, got " << tokens[1];
  ka.carry = tokens[1] == name + "1";
}

// A SIMD video line that spells its selectors on a and b (`d, a.h01, b,
// c`) gives the same selector as its sel operand.
void ExpectSpelledSelectorAgrees(const KnownAnswer& ka) {
  if (!IsSimdVideo(ka.variant.family) ||
      ka.spelling.find(' ') == std::string::npos) {
    return;
  }
  const int sel = NumSources(ka.variant) - 1;
  const absl::StatusOr<uint32_t> spelled =
      SpelledSimdSelector(ka.variant, ka.spelling);
  ASSERT_TRUE(spelled.ok()) << "line " << ka.line << ": " << spelled.status();
  EXPECT_EQ(*spelled & SourceMask(ka.variant, sel),
            ka.operands.v[sel] & SourceMask(ka.variant, sel))
      << "line " << ka.line << ": the spelled selector and the sel operand";
}

std::vector<KnownAnswer> LoadKnownAnswers() {
  const std::string path =
      std::string(PTXDIFF_SOURCE_DIR) + "/oracle/testdata/known_answers.txt";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<KnownAnswer> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = std::string(absl::StripAsciiWhitespace(
        absl::string_view(line).substr(0, line.find('#'))));
    if (line.empty()) continue;
    std::vector<std::string> fields = absl::StrSplit(line, '|');
    EXPECT_EQ(fields.size(), 4u) << "line " << number << ": " << line;
    if (fields.size() != 4) continue;
    for (std::string& f : fields)
      f = std::string(absl::StripAsciiWhitespace(f));
    auto variant = ParseVariant(fields[0]);
    EXPECT_TRUE(variant.ok()) << "line " << number << ": " << variant.status();
    if (!variant.ok()) continue;
    KnownAnswer ka{number, fields[0], *variant, {}, 0, "", false};
    ParseOutcome(fields[3], number, ka);
    std::vector<std::string> ops =
        absl::StrSplit(fields[1], ' ', absl::SkipEmpty());
    EXPECT_EQ(static_cast<int>(ops.size()), NumSources(*variant))
        << "line " << number;
    for (size_t i = 0; i < ops.size() && i < kMaxSources; ++i) {
      auto value = ParseOperand(ops[i], SourceWidth(*variant, i));
      EXPECT_TRUE(value.ok()) << "line " << number << ": " << value.status();
      ka.operands.v[i] = value.value_or(0);
    }
    ExpectSpelledSelectorAgrees(ka);
    auto expected = ParseOperand(fields[2], ResultWidth(*variant));
    EXPECT_TRUE(expected.ok())
        << "line " << number << ": " << expected.status();
    ka.expected = expected.value_or(0);
    out.push_back(ka);
  }
  return out;
}

void ExpectMatches(const KnownAnswer& ka, const Result& r, const char* oracle) {
  const int width = ResultWidth(ka.variant);
  EXPECT_EQ(HexOperand(r.bits, width), HexOperand(ka.expected, width))
      << oracle << ", line " << ka.line << ": " << ka.spelling;
  EXPECT_EQ(Token(r.undefined), ka.definedness)
      << oracle << ", line " << ka.line << ": " << ka.spelling;
  // Without `.cc` the expected flag is false: CC.CF is not written.
  EXPECT_EQ(r.carry, ka.carry)
      << oracle << ", line " << ka.line << ": " << ka.spelling
      << (IsBorrowKind(ka.variant) ? " (borrow-out)" : " (carry-out)");
}

// Fewer answers than this and the file was cut or misread: a test that
// checked nothing would pass.
constexpr size_t kMinKnownAnswers = 500;

TEST(KnownAnswerTest, FastOracle) {
  const auto answers = LoadKnownAnswers();
  ASSERT_GT(answers.size(), kMinKnownAnswers);
  for (const KnownAnswer& ka : answers) {
    ExpectMatches(ka, Evaluate(ka.variant, ka.operands), "fast");
  }
}

TEST(KnownAnswerTest, LiteralOracle) {
  const auto answers = LoadKnownAnswers();
  ASSERT_GT(answers.size(), kMinKnownAnswers);
  for (const KnownAnswer& ka : answers) {
    ExpectMatches(ka, LiteralEvaluate(ka.variant, ka.operands), "literal");
  }
}

// Every family has at least one known answer.
TEST(KnownAnswerTest, CoverEveryFamily) {
  std::vector<bool> covered(kNumFamilies);
  for (const KnownAnswer& ka : LoadKnownAnswers()) {
    covered[static_cast<int>(ka.variant.family)] = true;
  }
  for (const FamilyInfo& f : AllFamilies()) {
    EXPECT_TRUE(covered[static_cast<int>(f.family)]) << f.opcode;
  }
}

}  // namespace
}  // namespace ptxdiff
