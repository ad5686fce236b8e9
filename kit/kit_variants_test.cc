// Every line `ptxdiff variants` prints goes through the kit's spelling parser
// (kit/ptxdiff_worker.h) and must come back out unchanged, with the parts the
// instruction table says it has: the family's opcode, `.sat` exactly when the
// variant saturates, and an operand list exactly when operands carry
// selectors or negations, with those selectors and negations.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "ptxdiff_worker.h"

namespace ptxdiff {
namespace {

std::vector<std::string> VariantsOutput() {
  std::vector<std::string> lines;
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(PTXDIFF_BIN " variants", "r"),
                                          pclose);
  if (!p) return lines;
  std::string line;
  for (int c; (c = std::fgetc(p.get())) != EOF;) {
    if (c != '\n') {
      line.push_back(static_cast<char>(c));
    } else {
      lines.push_back(line);
      line.clear();
    }
  }
  return lines;
}

// The operand the spelling must show for `name`, given the variant.
kit::Operand Expected(const Variant& v, const std::string& name) {
  kit::Operand op{name, "", false};
  const Sel sel = name == "d"   ? v.dsel
                  : name == "a" ? v.asel
                  : name == "b" ? v.bsel
                                : Sel::kNone;
  if (sel != Sel::kNone) op.selector = std::string(SpellSel(sel));
  // A SIMD video variant's lane mask is d's suffix (`d.h0`, `d.b310`).
  if (name == "d" && v.mask != SimdMask::kNone) {
    op.selector = std::string(SpellSimdMask(v.mask));
  }
  op.negated = (name == "a" && v.vmad_form == VmadForm::kNegProduct) ||
               (name == "c" && v.vmad_form == VmadForm::kNegC);
  return op;
}

TEST(KitVariantsTest, EveryPrintedSpellingParsesAndRoundTrips) {
  const std::vector<std::string> lines = VariantsOutput();
  ASSERT_EQ(lines.size(), AllVariants().size());
  size_t with_operands = 0, negated = 0, visa = 0, failures = 0;
  for (const std::string& line : lines) {
    std::string error;
    const std::optional<kit::Variant> parsed = kit::ParseVariant(line, &error);
    if (!parsed || parsed->Spell() != line) {
      if (++failures <= 10) ADD_FAILURE() << "'" << line << "': " << error;
      continue;
    }
    const absl::StatusOr<Variant> v = ParseVariant(line);
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_EQ(parsed->opcode, InfoOf(v->family).opcode) << line;
    ASSERT_EQ(parsed->HasModifier("sat"), v->sat) << line;
    ASSERT_EQ(parsed->spelling, line);
    const bool decorated =
        v->asel != Sel::kNone || v->bsel != Sel::kNone ||
        v->dsel != Sel::kNone || v->vmad_form == VmadForm::kNegProduct ||
        v->vmad_form == VmadForm::kNegC || v->mask != SimdMask::kNone;
    ASSERT_EQ(!parsed->operands.empty(), decorated) << line;
    if (decorated) {
      ++with_operands;
      // The SIMD selector is written as suffixes, never as an operand.
      ASSERT_EQ(parsed->operands.size(), 1u + NumWrittenSources(*v)) << line;
      for (const kit::Operand& op : parsed->operands) {
        ASSERT_EQ(op, Expected(*v, op.name))
            << line << " operand " << op.ToString();
        negated += op.negated ? 1 : 0;
      }
    }
    visa += parsed->opcode == "visa.shl" ? 1 : 0;
  }
  EXPECT_EQ(failures, 0u);
  std::printf(
      "%zu spellings round-tripped: %zu with operand lists, %zu negations, %zu "
      "visa.shl\n",
      lines.size(), with_operands, negated, visa);
  EXPECT_GT(with_operands, 60000u);
  EXPECT_GT(negated, 0u);
  EXPECT_EQ(visa, 1024u);
}

}  // namespace
}  // namespace ptxdiff
