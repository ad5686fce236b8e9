#include "fuzzers/seed_corpus.h"

#include <algorithm>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "isa/fuzz_input.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

constexpr int kTuplesPerSeed = 8;

// A family's representative: its first variant with the most modifiers set
// among the first few, so that seeds exercise the axes.
Variant Representative(Family f) {
  const absl::Span<const Variant> first_few = VariantsOf(f).first(
      std::min<size_t>(VariantsOf(f).size(), 401));
  Variant best;
  int best_score = -1;
  for (const Variant& v : first_few) {
    const int score = v.sat + (v.asel != Sel::kNone) + (v.secop != SecOp::kNone) +
                      (v.dsel != Sel::kNone) + (v.vmad_form != VmadForm::kNone);
    if (score > best_score) best = v, best_score = score;
  }
  return best;
}

// The family's first variant, its plainest form.
Variant First(Family f) { return VariantsOf(f).front(); }

std::string Escaped(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) absl::StrAppendFormat(&out, "\\x%02x", c);
  return out;
}

}  // namespace

std::map<std::string, std::string> SeedCorpus() {
  std::map<std::string, std::string> corpus;
  for (const FamilyInfo& info : AllFamilies()) {
    std::mt19937_64 rng(static_cast<int>(info.family) + 1);
    for (const Variant& v : {Representative(info.family)}) {
      std::vector<Operands> tuples(kTuplesPerSeed);
      FillEdgeTuples(v, rng, tuples);
      std::string name = absl::StrCat(info.opcode, ".bin");
      corpus[name] = EncodeFuzzInput(v, tuples);
    }
  }
  return corpus;
}

std::string FuzzDictionary() {
  std::string out =
      "# ptxdiff differential fuzzer dictionary (generated: ptxdiff seed-corpus)\n"
      "# Variant ids (first 8 bytes of an input) of each family's plainest form,\n"
      "# then 8-byte edge operand values.\n";
  for (const FamilyInfo& info : AllFamilies()) {
    const Variant v = First(info.family);
    const uint64_t id = StableId(v);
    absl::StrAppend(&out, "# ", Spell(v), "\nid_",
                    absl::StrReplaceAll(info.opcode, {{".", "_"}}), "=\"",
                    Escaped(std::string(reinterpret_cast<const char*>(&id), 8)), "\"\n");
  }
  int n = 0;
  for (int width : {32, 64}) {
    for (uint64_t x : EdgeValues(width)) {
      if (x < 2 || ++n > 60) continue;
      absl::StrAppend(&out, "edge_", n, "=\"",
                      Escaped(std::string(reinterpret_cast<const char*>(&x), 8)), "\"\n");
    }
  }
  return out;
}

}  // namespace ptxdiff
