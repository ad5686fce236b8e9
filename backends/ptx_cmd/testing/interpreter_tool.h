// What the tests of the ptx-cmd backend share: the test interpreter
// (ptx_kernel_interpreter.cc) as the tool, for a target that defines
// PTXDIFF_INTERPRETER_PATH, and the tuples and counts they check it with.

#ifndef PTXDIFF_BACKENDS_PTX_CMD_TESTING_INTERPRETER_TOOL_H_
#define PTXDIFF_BACKENDS_PTX_CMD_TESTING_INTERPRETER_TOOL_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/files.h"
#include "gtest/gtest.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "isa/tuple.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {

inline const std::string kInterpreter = PTXDIFF_INTERPRETER_PATH;
inline const std::string kRunInterpreter = kInterpreter + " {ptx} {in} {out}";

// Lines in the file at `path` (a tool wrapper's log of its runs), 0 if none.
inline int64_t LinesIn(const std::string& path) {
  const std::string text = ReadFile(path).value_or("");
  return std::count(text.begin(), text.end(), '\n');
}

inline Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

// Tuples of `spellings`, interleaved (so each variant's results must go back
// to scattered positions), `per_variant` of each with edge operands, in the
// form a campaign sends most: every operand in a register.
inline std::vector<Tuple> MixedTuples(const std::vector<std::string>& spellings,
                                      int per_variant) {
  std::mt19937_64 rng(3);
  std::vector<std::vector<Operands>> operands;
  for (const std::string& s : spellings) {
    operands.emplace_back(per_variant);
    FillEdgeTuples(V(s), rng, operands.back());
  }
  std::vector<Tuple> tuples;
  for (int i = 0; i < per_variant; ++i) {
    for (size_t k = 0; k < spellings.size(); ++k) {
      const Variant v = V(spellings[k]);
      tuples.push_back({v, operands[k][i], RuntimeCapableSources(v)});
    }
  }
  return tuples;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_BACKENDS_PTX_CMD_TESTING_INTERPRETER_TOOL_H_
