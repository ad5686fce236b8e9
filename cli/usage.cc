#include "cli/usage.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace ptxdiff {
namespace {

struct FlagHelp {
  absl::string_view flag;  // as typed: "--max-time SECONDS"
  absl::string_view text;  // what it does, and its default
};

struct CommandHelp {
  absl::string_view name;
  absl::string_view synopsis;  // what follows the name
  absl::string_view summary;   // lines, each indented in the output
  std::vector<FlagHelp> flags;
  absl::string_view example;  // a command line
};

// Flags several commands share.
constexpr FlagHelp kBackend = {
    "--backend NAME",
    "oracle, ptxas, cuda, exec:/path/to/worker, or ptx-cmd:'my-tool {ptx}\n"
    "{in} {out}' (a tool that runs PTX modules); default: the best here\n"
    "(cuda with a GPU, else ptxas with the CUDA toolkit, else oracle)"};
constexpr FlagHelp kArch = {
    "--arch sm_XX",
    "the architecture ptxas and cuda compile for (default: the backend's)"};
constexpr FlagHelp kTimeout = {
    "--timeout SECONDS",
    "how long a worker may take to reply before it is restarted\n(default 60)"};
constexpr FlagHelp kReading = {
    "--reading spec|hardware",
    "judge against the PTX ISA text (spec, the default) or the text\n"
    "corrected by known NVIDIA hardware errata (oracle/errata.h)"};
constexpr FlagHelp kCudaDriver = {
    "--cuda-driver PATH",
    "with --backend cuda: load PATH, any implementation of the CUDA\n"
    "driver API, instead of NVIDIA's libcuda.so.1"};
constexpr FlagHelp kRuntime = {
    "--runtime NAMES",
    "these sources (e.g. a or a,c) are runtime values, unknown to a\n"
    "compiler (kernel parameters), the operands given their values;\n"
    "default: all immediates"};
// The program commands': programs are compiled for a target, and a
// tool's or a GPU's run has a timeout of its own.
constexpr FlagHelp kProgramArch = {
    "--arch SM",
    "the ptxas -arch, or the module's target (default sm_90; cuda: the "
    "device's)"};
constexpr FlagHelp kProgramTimeout = {
    "--timeout SECONDS",
    "the most one run of ptxas, of a tool or of one kernel may take\n"
    "(default 10)"};
constexpr FlagHelp kDir = {
    "--dir TRIAGE_DIR",
    "the triage directory (default $PTXDIFF_TRIAGE_DIR, else out/triage)"};

const std::vector<CommandHelp>& Commands() {
  static const auto* commands = new std::vector<CommandHelp>{
      {"eval",
       "'<variant>' A [B [C [D]]] [flags]",
       "Evaluate one instruction variant on operands with the CPU oracle.\n"
       "Operands: 0x-prefixed hex, decimal, or negative decimal. With "
       "--backend,\n"
       "also run it there and print the verdict; exit 1 on a mismatch.",
       {{"--json", "print the result as JSON"},
        kBackend,
        kRuntime,
        kArch,
        kTimeout,
        kReading,
        kCudaDriver},
       "ptxdiff eval 'bfe.s32' 1 40 8 --backend ptxas --runtime a"},
      {"variants",
       "[--count] [--family NAME] [--json]",
       "List the canonical spellings of the instruction variants.",
       {{"--count", "print how many, not the spellings"},
        {"--family NAME", "only this family's variants (add, vadd, bfe, ...)"},
        {"--json",
         "one JSON object per variant: family, minimum PTX ISA and SM, "
         "widths"}},
       "ptxdiff variants --family vadd --count"},
      {"sweep",
       "[flags]",
       "Run N edge-case tuples of every variant (of the families given) on a\n"
       "backend and compare with the oracle; or, with --exhaustive, every\n"
       "input of each variant whose inputs total at most --max-bits bits, and\n"
       "a sample of the wider ones. Exit 0 when nothing disagreed; 1 on\n"
       "a mismatch or a faulty batch, or when nothing was tested (the backend\n"
       "declined every tuple); 2 on bad input; 130 when Ctrl-C stopped it.",
       {kBackend,
        {"--family NAME",
         "only this family (repeatable; default: every family)"},
        {"--tuples N", "tuples per variant (default 16)"},
        {"--seed S", "the random seed (default 1)"},
        {"--batch N",
         "tuples per batch sent to the backend (default 4096; 65536 with\n"
         "--exhaustive)"},
        {"--exhaustive",
         "every input of each variant of at most --max-bits input bits, every\n"
         "source that can be a runtime value one (on ptxas: one compile, the\n"
         "kept code run for every input); progress and time left on stderr"},
        {"--max-bits N",
         "with --exhaustive: the widest input space run whole, 1 to 32\n"
         "(default 24: 16.8M inputs a variant)"},
        {"--sample N",
         "with --exhaustive: random inputs of each wider variant (default\n"
         "65536; 0 leaves them out)"},
        {"--runtime NAMES",
         "in every variant that has them, these sources are runtime\n"
         "values (e.g. a, or a,c): what a compiler claims for every value"},
        kArch,
        kTimeout,
        kReading,
        kCudaDriver},
       "ptxdiff sweep --backend ptxas --family add --tuples 4"},
      {"fuzz",
       "[flags]",
       "A fuzz campaign (on --backend, else $PTXDIFF_BACKEND, else the best\n"
       "backend here); Ctrl-C stops it\n"
       "and running it again resumes from the corpus and the triage "
       "directory.\n"
       "Needs a libFuzzer build: the campaign preset (scripts/campaign.sh "
       "builds\n"
       "it) or, slower, the fuzz preset. Exit 0 when the campaign ran and "
       "filed\n"
       "what it found; 1 when the fuzzer failed, a finding could not be filed\n"
       "(the triage directory's .pending/ journal keeps it for the next run), "
       "or\n"
       "nothing was tested (the backend declined every tuple); 2 on bad input.",
       {kBackend,
        {"--max-time SECONDS",
         "how long the campaign runs, start-up included (default 60)"},
        {"--jobs N",
         "fuzz processes, 1 to 64 (default 1; libFuzzer's -fork=N)"},
        {"--family NAME",
         "fuzz only this family (repeatable; default: every family)"},
        {"--exclude NAME", "leave this family out (repeatable)"},
        {"--mode campaign|crash",
         "campaign (default): the backend checks big batches on the side and\n"
         "findings are filed in the triage directory; crash: each input runs "
         "on\n"
         "the backend in turn, and a mismatch ends the run as a crash file in\n"
         "OUT/findings/ (for OSS-Fuzz and ClusterFuzzLite)"},
        kDir,
        {"--out DIR",
         "where the corpus, the stats, findings/ (crash files) and fuzz.log\n"
         "go (default out)"},
        {"--corpus DIR",
         "the corpus to resume from and grow (default "
         "OUT/corpus/differential;\n"
         "seeded from the instruction table when empty)"},
        {"--progress-seconds N", "a progress line every N seconds (default 5)"},
        {"--programs SHARE",
         "the share of the backend's time, 0 to 1, its workers spend on\n"
         "random programs beside the tuples, filed in the same triage\n"
         "directory (default 0; ptxas, ptx-cmd and cuda run programs, the\n"
         "others tuples only)"},
        {"--report",
         "at the end, write OUT/report.html and OUT/report.json, the\n"
         "conformance report of every run under OUT (as `ptxdiff report`)"},
        kArch,
        kTimeout,
        kReading,
        kCudaDriver},
       "ptxdiff fuzz --backend ptxas --family vadd --max-time 300 --out out"},
      {"compare",
       "'<variant>' '<variant>' [--tuples N] [--seed S]",
       "Evaluate two variants with as many operands on the same N edge and\n"
       "random tuples through the oracle, and show where they differ, by "
       "shift\n"
       "amount or position range: e.g. PTX 'shl.b32' against Intel vISA\n"
       "'visa.shl.ud.ud.ud'. Exit 1 if they differ.",
       {{"--tuples N", "how many tuples (default 4096)"},
        {"--seed S", "the random seed (default 1)"}},
       "ptxdiff compare 'shl.b32' 'visa.shl.ud.ud.ud'"},
      {"seed-corpus",
       "DIR",
       "Write the seed corpus and dictionary (generated from the table).",
       {},
       "ptxdiff seed-corpus out/seeds"},
      {"repro",
       "FILE|ENTRY [flags]",
       "Replay a text case, a program case (as `ptxdiff program` does), a\n"
       "libFuzzer crash file, or a triage entry (its name\n"
       "as `triage list` prints it, or its directory) on the oracle and a\n"
       "backend; exit 0 when they agree, 1 when they disagree, 2 on error.\n"
       "A crash file replays on the backend it was found on when the\n"
       "crash-backends.txt beside it (written by `fuzz --mode crash`) says "
       "which.",
       {kBackend, kDir, kArch, kTimeout, kReading, kCudaDriver},
       "ptxdiff repro value-mismatch~ptxas~min~fns.b32 --backend ptxas"},
      {"program",
       "FILE [--backend ptxas|cuda|ptx-cmd:COMMAND] [--arch sm_90] "
       "[--reading R]",
       "Evaluate a program case (several instructions with runtime inputs:\n"
       "docs/programs.md) with the composed oracle at its witness inputs. "
       "With\n"
       "--backend ptxas, compile it with its inputs as immediates (the folded\n"
       "outputs, judged at the witness) and as runtime values (the constants\n"
       "ptxas claims for every input, refuted by the first input vector where\n"
       "the oracle differs). With --backend cuda (a GPU) or\n"
       "'ptx-cmd:COMMAND' (your tool), run it in both forms, at the witness\n"
       "and more input vectors (docs/kernel-abi.md, \"Programs\"). Exit 1 on "
       "a\n"
       "disagreement, a crash or a hang.",
       {{"--backend ptxas|cuda|ptx-cmd:COMMAND",
         "compile it with ptxas, or run it on a GPU or your tool"},
        kProgramArch,
        kProgramTimeout,
        kCudaDriver,
        kReading},
       "ptxdiff program examples/programs/bfe-claim.ptxprog --backend ptxas"},
      {"programs",
       "[--max-time S] [--dir TRIAGE_DIR] [flags]",
       "A campaign of random programs (short chains and loops in the shapes "
       "of\n"
       "ptxas's known bugs: docs/programs.md) through ptxas, a GPU or your\n"
       "tool, judged by the composed oracle. Each disagreement (or a crash or\n"
       "hang of the GPU or tool) is minimized and filed in the triage\n"
       "directory with its program case and a repro.ptx; the summary says\n"
       "what each entry is. Exit 0 when the run checked programs and filed\n"
       "what it found, 1 otherwise, 2 on bad input.",
       {{"--backend ptxas|cuda|ptx-cmd:COMMAND",
         "what runs the programs (default ptxas)"},
        {"--max-time SECONDS",
         "how long the campaign runs, minimizing included (default 60)"},
        kDir,
        kProgramArch,
        kProgramTimeout,
        kCudaDriver,
        {"--threads N", "programs checked side by side (default: the cores)"},
        {"--seed N", "the first thread's generator seed (default 1)"},
        {"--suppress SPELLING",
         "never generate this variant (repeatable, or a comma list)"},
        {"--out DIR",
         "where the run's progress is kept for the report (default out)"},
        {"--report",
         "at the end, write OUT/report.html and OUT/report.json (as\n"
         "`ptxdiff report`)"},
        kReading},
       "ptxdiff programs --max-time 600"},
      {"minimize",
       "FILE [flags]",
       "Minimize the disagreement in FILE (a text case, a crash file, or a\n"
       "program case: docs/programs.md) and file it in the triage directory.",
       {kBackend,
        kDir,
        kArch,
        kTimeout,
        kReading,
        kCudaDriver,
        {"--max-time SECONDS",
         "a program case: minimized and filed as far as it got by then\n"
         "(default 300)"}},
       "ptxdiff minimize out/findings/crash-0123abcd --backend ptxas"},
      {"triage",
       "list | show ENTRY | merge DIR... | mark ENTRY --explained WHY [--dir "
       "TRIAGE_DIR]",
       "Inspect and manage a triage directory: list its entries (count, and "
       "the\n"
       "name that show, mark and repro take), show one, merge other "
       "directories\n"
       "into it, or mark an entry as a known, explained disagreement.",
       {kDir,
        {"--explained WHY", "with mark: the reason the disagreement is known"}},
       "ptxdiff triage list --dir out/triage"},
      {"calibrate",
       "[flags]",
       "The SASS evaluator's self-check: every variant compiled by ptxas\n"
       "with every runtime-capable source a parameter, its code run on the\n"
       "CPU for N operand sets and judged by the oracle. At -O0 a\n"
       "disagreement is a defect of the evaluator, not of ptxas. Prints the\n"
       "share of kernels run to the end and what stopped the rest. Exit 0\n"
       "when everything executed agrees, 1 otherwise, 2 on bad input.",
       {{"--family NAME",
         "only this family (repeatable; default: every PTX family)"},
        {"--tuples N", "operand sets per variant, one kernel (default 12)"},
        {"--opt N", "ptxas's -O level, 0 to 3 (default 0)"},
        {"--arch sm_90", "the target (the evaluator decodes sm_90, sm_90a)"},
        {"--max-time SECONDS", "stop after this long (default: when done)"},
        {"--timeout SECONDS", "each ptxas compile's (default 60)"},
        {"--threads N", "ptxas runs side by side (default: the cores)"},
        {"--seed N", "the operands' seed (default 1)"},
        {"--show N", "disagreements listed (default 20)"},
        {"--programs N",
         "check N random programs (both input forms) instead of tuples"}},
       "ptxdiff calibrate --family bfe --opt 3"},
      {"report",
       "[OUT_DIR...] [--dir TRIAGE_DIR] [--html FILE] [--json FILE]",
       "Write the conformance report of the campaigns run with --out OUT_DIR\n"
       "(default out): one HTML page that opens from disk (the instruction\n"
       "set coloured by outcome, the findings with their repro commands, the\n"
       "runs over time; docs/report.md) and the same as JSON. Several\n"
       "directories (or backends in one) are shown side by side. Exit 0 when\n"
       "something was reported, 1 when no run kept outcome records, 2 on bad\n"
       "input.",
       {{"--dir TRIAGE_DIR",
         "the triage directory of a single OUT_DIR (default: OUT_DIR/triage)"},
        {"--html FILE", "where the page goes (default OUT_DIR/report.html)"},
        {"--json FILE", "where the JSON goes (default OUT_DIR/report.json)"}},
       "ptxdiff report out out-gpgpusim"},
      {"help", "", "Show this message.", {}, "ptxdiff help"},
      {"--version", "", "Print ptxdiff's version.", {}, "ptxdiff --version"},
  };
  return *commands;
}

std::string Indented(absl::string_view text, int indent) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::StrAppend(&out, std::string(indent, ' '), line, "\n");
  }
  return out;
}

std::string Synopsis(const CommandHelp& c) {
  return c.synopsis.empty() ? std::string(c.name)
                            : absl::StrCat(c.name, " ", c.synopsis);
}

// "  --flag X    text", the text's later lines under its first.
std::string FlagLines(const std::vector<FlagHelp>& flags) {
  size_t width = 0;
  for (const FlagHelp& f : flags) width = std::max(width, f.flag.size());
  std::string out;
  for (const FlagHelp& f : flags) {
    bool first = true;
    for (absl::string_view line : absl::StrSplit(f.text, '\n')) {
      absl::StrAppend(&out,
                      absl::StrFormat("  %-*s  %s\n", static_cast<int>(width),
                                      first ? f.flag : "", line));
      first = false;
    }
  }
  return out;
}

}  // namespace

std::string MainUsage() {
  std::string out =
      "usage: ptxdiff <command> [arguments]\n"
      "       ptxdiff <command> --help   (its flags, their defaults, and an "
      "example)\n"
      "\ncommands:\n";
  for (const CommandHelp& c : Commands()) {
    absl::StrAppend(&out, "  ", Synopsis(c), "\n", Indented(c.summary, 6));
  }
  return out;
}

std::string CommandUsage(absl::string_view command) {
  for (const CommandHelp& c : Commands()) {
    if (c.name != command) continue;
    std::string out = absl::StrCat("usage: ptxdiff ", Synopsis(c), "\n",
                                   Indented(c.summary, 6));
    if (!c.flags.empty())
      absl::StrAppend(&out, "\nflags:\n", FlagLines(c.flags));
    absl::StrAppend(&out, "\nExample: ", c.example, "\n");
    return out;
  }
  return MainUsage();
}

}  // namespace ptxdiff
