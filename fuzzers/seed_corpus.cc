#include "fuzzers/seed_corpus.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

constexpr int kTuplesPerSeed = 8;

// A family's representative: its first variant with the most modifiers set
// among the first few, so that seeds exercise the axes.
Variant Representative(Family f) {
  const absl::Span<const Variant> first_few =
      VariantsOf(f).first(std::min<size_t>(VariantsOf(f).size(), 401));
  Variant best;
  int best_score = -1;
  for (const Variant& v : first_few) {
    const int score = v.sat + (v.asel != Sel::kNone) +
                      (v.secop != SecOp::kNone) + (v.dsel != Sel::kNone) +
                      (v.vmad_form != VmadForm::kNone);
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
      "# ptxdiff differential fuzzer dictionary (generated: ptxdiff "
      "seed-corpus)\n"
      "# Variant ids (first 8 bytes of an input) of each family's plainest "
      "form,\n"
      "# then 8-byte edge operand values.\n";
  for (const FamilyInfo& info : AllFamilies()) {
    const Variant v = First(info.family);
    const uint64_t id = StableId(v);
    absl::StrAppend(&out, "# ", Spell(v), "\nid_",
                    absl::StrReplaceAll(info.opcode, {{".", "_"}}), "=\"",
                    Escaped(std::string(reinterpret_cast<const char*>(&id), 8)),
                    "\"\n");
  }
  int n = 0;
  for (int width : {32, 64}) {
    for (uint64_t x : EdgeValues(width)) {
      if (x < 2 || ++n > 60) continue;
      absl::StrAppend(
          &out, "edge_", n, "=\"",
          Escaped(std::string(reinterpret_cast<const char*>(&x), 8)), "\"\n");
    }
  }
  return out;
}

// FailedPrecondition naming the first seed's place in `dir` that holds what
// a rename cannot replace (a directory): refused before anything moves, for
// a rename failing halfway would leave the corpus neither as it was nor
// whole (the twelfth fault run: 28 of its 66 files left).
absl::Status SeedsHaveTheirPlaces(
    const std::string& dir, const std::map<std::string, std::string>& seeds) {
  for (const auto& [name, bytes] : seeds) {
    const std::string to = absl::StrCat(dir, "/", name);
    struct stat st;
    if (lstat(to.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          to, " is a directory, where a seed goes: nothing was changed"));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteSeedCorpus(const std::string& dir, const FileWriter& write) {
  PTXDIFF_RETURN_IF_ERROR(MakeDirs(dir));
  const size_t slash = dir.find_last_of('/');
  const std::string parent =
      slash == std::string::npos ? "." : dir.substr(0, slash);
  // Beside `dir`, not in it: libFuzzer reads a corpus directory's
  // subdirectories too.
  PTXDIFF_ASSIGN_OR_RETURN(
      std::unique_ptr<TempDir> staging,
      TempDir::CreateIn(parent.empty() ? "/" : parent, ".tmp-seeds"));
  const std::map<std::string, std::string> seeds = SeedCorpus();
  PTXDIFF_RETURN_IF_ERROR(SeedsHaveTheirPlaces(dir, seeds));
  for (const auto& [name, bytes] : seeds) {
    PTXDIFF_RETURN_IF_ERROR(write(staging->File(name), bytes));
  }
  // A rename takes no space; should one fail all the same, the seeds
  // already moved go too.
  std::vector<std::string> moved;
  for (const auto& [name, bytes] : seeds) {
    const std::string to = absl::StrCat(dir, "/", name);
    if (rename(staging->File(name).c_str(), to.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      for (const std::string& m : moved) std::remove(m.c_str());
      return absl::InternalError(
          absl::StrCat("cannot move a seed into ", to, ": ", why));
    }
    moved.push_back(to);
  }
  return absl::OkStatus();
}

}  // namespace ptxdiff
