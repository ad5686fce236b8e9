#include "cli/commands.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli/backend_commands.h"
#include "cli/calibrate_command.h"
#include "cli/report_command.h"
#include "cli/flags.h"
#include "cli/fuzz_command.h"
#include "cli/program_command.h"
#include "cli/triage_commands.h"
#include "cli/usage.h"
#include "common/status_macros.h"
#include "common/version.h"
#include "harness/differential.h"
#include "harness/variant_comparison.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "report/report_data.h"  // JsonString

namespace ptxdiff {
namespace {

// A SIMD video selector left out of the operands comes from the spelling
// (`vadd2.u32.u32.u32 d, a.h01, b, c`; the default where none is written).
absl::StatusOr<std::vector<std::string>> WithSpelledSelector(
    const Variant& v, absl::string_view spelling,
    std::vector<std::string> texts) {
  if (!IsSimdVideo(v.family) ||
      static_cast<int>(texts.size()) != NumWrittenSources(v)) {
    return texts;
  }
  absl::StatusOr<uint32_t> sel = SpelledSimdSelector(v, spelling);
  if (!sel.ok()) return sel.status();
  texts.push_back(HexOperand(*sel, SourceWidth(v, NumSources(v) - 1)));
  return texts;
}

// A SIMD video tuple as PTX, its selector spelled on a and b:
// "vadd2.u32.u32.u32 d, a.h01, b.h32, c"; "" for any other variant.
std::string SpelledInstruction(const Variant& v, const Operands& ops) {
  if (!IsSimdVideo(v.family)) return "";
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(v); ++i) {
    sources.push_back(IsSelectorSource(v, i)
                          ? HexOperand(ops.v[i], SourceWidth(v, i))
                          : std::string(SourceName(v, i)));
  }
  return PtxInstruction(v, "d", sources);
}

absl::StatusOr<Operands> ParseOperands(const Variant& v,
                                       const std::vector<std::string>& texts) {
  const int n = NumSources(v);
  if (static_cast<int>(texts.size()) != n) {
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) names.emplace_back(SourceName(v, i));
    // A SIMD selector may instead be spelled on a and b (WithSpelledSelector).
    const std::string or_fewer =
        IsSimdVideo(v.family) ? absl::StrCat(NumWrittenSources(v), " or ") : "";
    return absl::InvalidArgumentError(
        absl::StrCat(Spell(v), " takes ", or_fewer, n, " operand",
                     n == 1 ? "" : "s", " (", absl::StrJoin(names, ", "),
                     or_fewer.empty() ? ""
                                      : "; sel may be "
                                        "spelled as a.asel, b.bsel instead",
                     "), got ", texts.size()));
  }
  Operands ops;
  for (int i = 0; i < n; ++i) {
    auto value = ParseOperand(texts[i], SourceWidth(v, i));
    if (!value.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "operand ", SourceName(v, i), ": ", value.status().message()));
    }
    ops.v[i] = *value;
  }
  return ops;
}

// The result under `reading`; when the other reading differs (a known
// hardware erratum), both, naming the erratum.
void PrintEval(const Variant& v, const Operands& ops, Reading reading,
               bool json, std::ostream& out) {
  const int width = ResultWidth(v);
  const ReadResult read = Read(reading, v, ops);
  const Result& r = read.result;
  const Reading other_reading =
      reading == Reading::kSpec ? Reading::kHardware : Reading::kSpec;
  const ReadResult other = Read(other_reading, v, ops);
  const bool differ = !(other.result == r);
  const Erratum* erratum =
      read.erratum != nullptr ? read.erratum : other.erratum;
  const std::vector<std::string> operands = HexOperands(v, ops);
  if (json) {
    std::vector<std::string> quoted;
    for (const std::string& s : operands) quoted.push_back(JsonString(s));
    out << "{\"variant\": " << JsonString(Spell(v)) << ", \"operands\": ["
        << absl::StrJoin(quoted, ", ") << "]";
    if (const std::string ptx = SpelledInstruction(v, ops); !ptx.empty()) {
      out << ", \"instruction\": " << JsonString(ptx);
    }
    out << ", \"result\": " << JsonString(HexOperand(r.bits, width))
        << ", \"width\": " << width;
    // The outgoing CC.CF of a `.cc` variant (sub.cc, subc.cc: the borrow).
    if (HasCarryOut(v)) out << ", \"carry\": " << (r.carry ? 1 : 0);
    out << ", \"defined\": " << (r.defined() ? "true" : "false");
    if (!r.defined()) {
      out << ", \"reason\": " << JsonString(Token(r.undefined))
          << ", \"explanation\": " << JsonString(Describe(r.undefined));
    }
    out << ", \"reading\": " << JsonString(ReadingName(reading));
    if (differ) {
      out << ", \"" << ReadingName(other_reading)
          << "\": " << JsonString(HexOperand(other.result.bits, width))
          << ", \"erratum\": " << JsonString(erratum->id);
    }
    out << "}\n";
    return;
  }
  auto line = [&](const Result& x) {
    return absl::StrCat(
        ResultText(v, x.bits, x.carry),
        x.defined() ? "  defined"
                    : absl::StrCat("  undefined: ", Describe(x.undefined)));
  };
  if (const std::string ptx = SpelledInstruction(v, ops); !ptx.empty()) {
    out << ptx << "\n";  // the selector as the instruction spells it
  }
  if (!differ) {
    out << line(r) << "\n";
    return;
  }
  // The two readings disagree: show both, the one judged against first.
  out << line(r) << "  (" << ReadingName(reading) << " reading)\n"
      << line(other.result) << "  (" << ReadingName(other_reading)
      << " reading: erratum " << erratum->id << ")\n";
}

}  // namespace

int RunEval(const std::vector<std::string>& args, std::ostream& out,
            std::ostream& err) {
  auto parsed = ParseArgs(
      args, {"json"},
      {"backend", "arch", "timeout", "reading", "cuda-driver", "runtime"});
  if (!parsed.ok()) return Fail(err, "eval", parsed.status());
  auto reading = ReadingFlag(*parsed);
  if (!reading.ok()) return Fail(err, "eval", reading.status());
  if (parsed->positional.empty()) {
    return Fail(err, "eval",
                absl::InvalidArgumentError(
                    "missing the variant, e.g. ptxdiff eval 'add.s32' 1 2"));
  }
  auto variant = ParseVariant(parsed->positional[0]);
  if (!variant.ok()) return Fail(err, "eval", variant.status());
  auto texts = WithSpelledSelector(
      *variant, parsed->positional[0],
      std::vector<std::string>(parsed->positional.begin() + 1,
                               parsed->positional.end()));
  if (!texts.ok()) return Fail(err, "eval", texts.status());
  auto ops = ParseOperands(*variant, *texts);
  if (!ops.ok()) return Fail(err, "eval", ops.status());
  auto runtime = ParseRuntimeSources(*variant, parsed->Get("runtime"));
  if (!runtime.ok()) return Fail(err, "eval", runtime.status());
  if (!parsed->Has("backend")) {
    PrintEval(*variant, *ops, *reading, parsed->Has("json"), out);
    return kExitOk;
  }
  auto client = StartBackend(*parsed);
  if (!client.ok()) return Fail(err, "eval", client.status());
  const Tuple tuple{*variant, *ops, *runtime};
  if (tuple.runtime != 0)
    out << "instruction: " << FormattedInstruction(tuple) << "\n";
  const BatchOutcome outcome = (*client)->Run({&tuple, 1});
  if (EnvironmentFailed(outcome))  // not the backend's: no verdict
    return Fail(err, "eval", absl::UnavailableError(outcome.fault->detail));
  return PrintBackendEval(tuple, *reading, **client, outcome, out);
}

int RunVariants(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  auto parsed = ParseArgs(args, {"json", "count"}, {"family"});
  if (!parsed.ok()) return Fail(err, "variants", parsed.status());
  if (!parsed->positional.empty()) {
    return Fail(err, "variants",
                absl::InvalidArgumentError(absl::StrCat(
                    "unexpected argument '", parsed->positional[0], "'")));
  }
  const std::string family = parsed->Get("family");
  const bool json = parsed->Has("json");
  std::vector<const Variant*> selected;
  const bool family_known =
      family.empty() || FamilyByOpcode(family).has_value();
  if (!family_known) {
    std::vector<absl::string_view> names;
    for (const FamilyInfo& f : AllFamilies()) names.push_back(f.opcode);
    return Fail(err, "variants",
                absl::InvalidArgumentError(
                    absl::StrCat("unknown family '", family,
                                 "'; families: ", absl::StrJoin(names, " "))));
  }
  for (const Variant& v : AllVariants()) {
    if (family.empty() || InfoOf(v.family).opcode == family) {
      selected.push_back(&v);
    }
  }
  if (parsed->Has("count")) {
    out << (json ? absl::StrCat("{\"count\": ", selected.size(), "}")
                 : absl::StrCat(selected.size()))
        << "\n";
    return kExitOk;
  }
  if (json) out << "[\n";
  for (size_t i = 0; i < selected.size(); ++i) {
    const Variant& v = *selected[i];
    if (!json) {
      out << Spell(v) << "\n";
      continue;
    }
    const IsaLevel level = LevelOf(v);
    std::vector<int> source_widths;
    std::vector<std::string> runtime_sources;
    for (int s = 0; s < NumSources(v); ++s) {
      source_widths.push_back(SourceWidth(v, s));
      if (CanBeRuntime(v, s))
        runtime_sources.push_back(JsonString(SourceName(v, s)));
    }
    out << absl::StrFormat(
        "  {\"spelling\": %s, \"family\": %s, \"min_ptx\": \"%d.%d\", "
        "\"min_sm\": %d, \"sources\": %d, \"source_widths\": [%s], "
        "\"runtime_sources\": [%s], \"result_width\": %d, \"stable_id\": "
        "\"%016x\"}%s\n",
        JsonString(Spell(v)), JsonString(InfoOf(v.family).opcode),
        level.ptx / 10, level.ptx % 10, level.sm, NumSources(v),
        absl::StrJoin(source_widths, ", "),
        absl::StrJoin(runtime_sources, ", "), ResultWidth(v), StableId(v),
        i + 1 == selected.size() ? "" : ",");
  }
  if (json) out << "]\n";
  return kExitOk;
}

namespace {

void PrintComparison(const Variant& a, const Variant& b,
                     const VariantComparison& c, uint64_t seed,
                     std::ostream& out) {
  out << "compare: " << Spell(a) << " against " << Spell(b) << ", " << c.tuples
      << " tuples (edge and random operands, seed " << seed
      << "), results compared on the low " << c.compared_bits << " bits"
      << (c.compared_carry ? " and CC.CF" : "") << "\n"
      << absl::StrFormat("  agree        %d\n", c.agree)
      << absl::StrFormat("  differ       %d\n", c.differ)
      << absl::StrFormat(
             "  unspecified  %d  (undefined by the spec in either)\n",
             c.unspecified);
  int source = -1;
  for (const AmountRange& r : c.amount_ranges) {
    if (r.source != source) {
      source = r.source;
      out << "by " << SourceName(a, source) << " (an amount):\n";
    }
    const std::string range = absl::StrCat(
        r.lo, "..", r.hi == ~uint64_t{0} ? "max" : absl::StrCat(r.hi));
    out << absl::StrFormat("  %-22s %6d tuples  %6d differ\n", range, r.tuples,
                           r.differ);
  }
  if (c.examples.empty()) return;
  out << "first differences (replay with eval):\n";
  for (const Operands& ops : c.examples) {
    out << "  " << ReplayLine(a, ops, Evaluate(a, ops)) << "\n"
        << "  " << ReplayLine(b, ops, Evaluate(b, ops)) << "\n";
  }
}

}  // namespace

int RunCompare(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  auto parsed = ParseArgs(args, {}, {"tuples", "seed"});
  if (!parsed.ok()) return Fail(err, "compare", parsed.status());
  if (parsed->positional.size() != 2) {
    return Fail(
        err, "compare",
        absl::InvalidArgumentError("expected two variants, e.g. 'shl.b32' "
                                   "'visa.shl.ud.ud.ud'"));
  }
  const absl::StatusOr<int64_t> tuples =
      IntFlag(*parsed, "tuples", 4096, 1, 1 << 24);
  const absl::StatusOr<int64_t> seed =
      IntFlag(*parsed, "seed", 1, 0, INT64_MAX);
  for (const absl::Status& s : {tuples.status(), seed.status()}) {
    if (!s.ok()) return Fail(err, "compare", s);
  }
  auto a = ParseVariant(parsed->positional[0]);
  if (!a.ok()) return Fail(err, "compare", a.status());
  auto b = ParseVariant(parsed->positional[1]);
  if (!b.ok()) return Fail(err, "compare", b.status());
  auto comparison = CompareVariants(*a, *b, static_cast<int>(*tuples), *seed);
  if (!comparison.ok()) return Fail(err, "compare", comparison.status());
  PrintComparison(*a, *b, *comparison, *seed, out);
  return comparison->differ > 0 ? 1 : kExitOk;
}

namespace {

bool AsksForHelp(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--help" || a == "-h";
  });
}

}  // namespace

int RunMain(const std::vector<std::string>& argv, std::ostream& out,
            std::ostream& err) {
  if (argv.size() < 2 || argv[1] == "help" || argv[1] == "--help" ||
      argv[1] == "-h") {
    (argv.size() < 2 ? err : out) << MainUsage();
    return argv.size() < 2 ? kExitBadInput : kExitOk;
  }
  if (argv[1] == "--version" || argv[1] == "version") {
    out << "ptxdiff " << kPtxdiffVersion << "\n";
    return kExitOk;
  }
  const std::vector<std::string> rest(argv.begin() + 2, argv.end());
  if (AsksForHelp(rest)) {
    out << CommandUsage(argv[1]);
    return kExitOk;
  }
  if (argv[1] == "eval") return RunEval(rest, out, err);
  if (argv[1] == "variants") return RunVariants(rest, out, err);
  if (argv[1] == "sweep") return RunSweep(rest, out, err);
  if (argv[1] == "repro") return RunRepro(rest, out, err);
  if (argv[1] == "fuzz") return RunFuzz(rest, out, err);
  if (argv[1] == "compare") return RunCompare(rest, out, err);
  if (argv[1] == "seed-corpus") return RunSeedCorpus(rest, out, err);
  if (argv[1] == "minimize") return RunMinimize(rest, out, err);
  if (argv[1] == "triage") return RunTriage(rest, out, err);
  if (argv[1] == "program") return RunProgram(rest, out, err);
  if (argv[1] == "programs") return RunPrograms(rest, out, err);
  if (argv[1] == "calibrate") return RunCalibrate(rest, out, err);
  if (argv[1] == "report") return RunReport(rest, out, err);
  err << "ptxdiff: unknown command '" << argv[1] << "'\n\n" << MainUsage();
  return kExitBadInput;
}

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

int Fail(std::ostream& err, std::string_view command,
         const absl::Status& status) {
  err << "ptxdiff " << command << ": " << status.message() << "\n";
  return kExitBadInput;
}

}  // namespace ptxdiff
