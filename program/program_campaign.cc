#include "program/program_campaign.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "program/program_minimizer.h"
#include "program/program_ptxas.h"
#include "triage/triage_store.h"
#include "worker/backends/ptxas/sass_constants.h"

namespace ptxdiff {
namespace {

// The spellings of a program's instruction steps, in order.
std::vector<std::string> StepSpellings(const Program& p) {
  std::vector<std::string> out;
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction) out.push_back(Spell(s.variant));
    if (s.kind == ProgramStep::kMove) out.push_back("mov");
  }
  return out;
}

bool HasLoop(const Program& p) {
  return std::any_of(p.steps.begin(), p.steps.end(),
                     [](const ProgramStep& s) { return s.kind == ProgramStep::kLoopBegin; });
}

// The disagreement in words: what ptxas stores and where the oracle differs.
std::string Disagreement(const Program& p, const ProgramMismatch& m, const std::string& arch) {
  if (m.form == ProgramInputs::kImmediate) {
    return absl::StrCat("ptxas ", arch, " folds it to ", ClaimedText(p, m.claimed),
                        "; the composed oracle gives ", OutputsText(p, m.oracle));
  }
  return absl::StrCat("ptxas ", arch, " claims ", ClaimedText(p, m.claimed),
                      " for every input; at ", InputsText(p, m.inputs),
                      " the composed oracle gives ", OutputsText(p, m.oracle));
}

// "abs.s32, setp.lt.s32, selp.b32", "(loops)" added when it has any.
std::string Shape(const Program& p) {
  return absl::StrCat(absl::StrJoin(StepSpellings(p), ", "), HasLoop(p) ? " (loops)" : "");
}

// "runtime claim, 3 steps (shl.b32, mul.lo.u32, and.b32): ..."
std::string What(const Program& p, const ProgramMismatch& m, const std::string& arch) {
  const int steps = CountSteps(p);
  return absl::StrCat(m.form == ProgramInputs::kImmediate ? "immediate fold" : "runtime claim",
                      ", ", steps, steps == 1 ? " step" : " steps", HasLoop(p) ? " with loops" : "",
                      " (", absl::StrJoin(StepSpellings(p), ", "), "): ", Disagreement(p, m, arch));
}

// The program with its witness at the mismatch's inputs, so that `ptxdiff
// program` on the case shows the disagreement.
Program AtMismatch(Program p, const ProgramMismatch& m) {
  for (size_t k = 0; k < p.inputs.size() && k < m.inputs.size(); ++k) {
    p.inputs[k].witness = m.inputs[k];
  }
  return p;
}

// The case text: the program, with comments saying what differs and how to
// replay it.
std::string CaseText(const Program& p, const ProgramMismatch& m, const std::string& arch,
                     Reading reading) {
  std::string text = FormatProgram(p);
  const std::string comments = absl::StrCat(
      "# ", Disagreement(p, m, arch), " (", ReadingName(reading), " reading), with the inputs ",
      m.form == ProgramInputs::kImmediate ? "as immediates" : "as kernel parameters",
      ".\n# Replay: ptxdiff program case.txt --backend ptxas --arch ", arch, "\n");
  text.insert(text.find('\n') + 1, comments);
  return text;
}

std::string ReproText(const Program& p, const ProgramMismatch& m, const PtxTarget& target,
                      const std::string& arch) {
  return absl::StrCat("// ", Disagreement(p, m, arch),
                      ".\n// Compile: ptxas -arch=", arch, " repro.ptx -o repro.cubin\n",
                      ProgramModule(p, target, m.form));
}

class Campaign {
 public:
  Campaign(const ProgramCampaignOptions& o, TriageStore store, PtxTarget target,
           const std::function<void(const std::string&)>& progress)
      : o_(o), store_(std::move(store)), target_(target), progress_(progress),
        start_(absl::Now()), end_(start_ + o.max_time), suppressed_(o.shape.suppressed) {}

  void Worker(uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (absl::Now() < end_) {
      const std::vector<Program> batch = NextBatch(rng);
      if (batch.empty()) return;
      CheckBatch(batch);
    }
  }

  ProgramCampaignReport TakeReport() {
    report_.suppressed = suppressed_;
    return std::move(report_);
  }

 private:
  // The next programs to check, as many as one ptxas run takes; fewer when
  // `next` runs out.
  std::vector<Program> NextBatch(std::mt19937_64& rng) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Program> batch;
    ProgramShape shape = o_.shape;
    shape.suppressed = suppressed_;
    while (static_cast<int>(batch.size()) < kProgramsPerPtxasRun) {
      std::optional<Program> p = o_.next ? o_.next(rng) : RandomProgram(rng, shape);
      if (!p) break;
      batch.push_back(std::move(*p));
    }
    return batch;
  }

  // Both forms of each program; a disagreement in the first form is not
  // looked for again in the second.
  void CheckBatch(const std::vector<Program>& batch) {
    std::vector<std::pair<Program, ProgramInputs>> found;
    std::vector<bool> done(batch.size());
    for (ProgramInputs form : {ProgramInputs::kImmediate, ProgramInputs::kRuntime}) {
      std::vector<Program> programs;
      std::vector<size_t> index;
      for (size_t k = 0; k < batch.size(); ++k) {
        // Without inputs the two kernels are one.
        if (done[k] || (form == ProgramInputs::kRuntime && batch[k].inputs.empty())) continue;
        programs.push_back(batch[k]);
        index.push_back(k);
      }
      absl::StatusOr<std::vector<ProgramCheck>> checks =
          CheckPrograms(o_.ptxas, o_.arch, programs, form, o_.reading);
      if (!checks.ok()) {
        Error(absl::StrCat("ptxas on programs: ", checks.status().message()));
        return;
      }
      for (size_t j = 0; j < checks->size(); ++j) {
        const ProgramCheck& check = (*checks)[j];
        if (check.judged) {
          Count(form == ProgramInputs::kImmediate ? &ProgramCampaignReport::folded
                                                  : &ProgramCampaignReport::claimed);
        }
        if (check.mismatch) {
          done[index[j]] = true;
          found.emplace_back(AtMismatch(programs[j], *check.mismatch), form);
        }
      }
    }
    Count(&ProgramCampaignReport::programs, static_cast<int64_t>(batch.size()));
    Count(&ProgramCampaignReport::disagreements, static_cast<int64_t>(found.size()));
    for (const auto& [program, form] : found) FileMinimized(program, form);
  }

  // Whether each candidate still shows a disagreement in `form`, in one
  // ptxas run; none does once the run is out of time, so that minimizing
  // ends with what it has.
  absl::StatusOr<std::vector<bool>> Shows(std::span<const Program> candidates,
                                          ProgramInputs form) {
    std::vector<bool> out(candidates.size());
    if (absl::Now() >= end_) return out;
    PTXDIFF_ASSIGN_OR_RETURN(const std::vector<ProgramCheck> checks,
                             CheckPrograms(o_.ptxas, o_.arch, candidates, form, o_.reading));
    for (size_t k = 0; k < checks.size(); ++k) out[k] = checks[k].mismatch.has_value();
    return out;
  }

  void FileMinimized(const Program& found, ProgramInputs form) {
    const absl::Time start = absl::Now();
    const ProgramBatchPredicate shows = [this, form](std::span<const Program> c) {
      return Shows(c, form);
    };
    absl::StatusOr<ProgramMinimizeResult> min =
        MinimizeProgram(found, shows, o_.max_minimize_candidates);
    const Program& program = min.ok() ? min->program : found;
    // The minimized program's own disagreement, for its files.
    absl::StatusOr<ProgramCheck> check = CheckProgram(o_.ptxas, o_.arch, program, form, o_.reading);
    if (!check.ok() || !check->mismatch) {
      Error(absl::StrCat("a disagreement did not reproduce after minimizing:\n",
                         FormatProgram(program)));
      return;
    }
    Finding f = FindingFor(AtMismatch(program, *check->mismatch), *check->mismatch);
    f.minimize_backend_calls = min.ok() ? min->rounds : 0;
    f.minimize_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    File(f, program);
  }

  Finding FindingFor(const Program& p, const ProgramMismatch& m) {
    Finding f;
    f.kind = FindingKind::kValueMismatch;
    f.reading = o_.reading;
    f.backend = "ptxas";
    f.backend_identity = absl::StrCat("ptxas ", o_.arch, " (", o_.ptxas, ")");
    f.program = Finding::ProgramCase{
        .name = ProgramSignatureName(ProgramSignature(p)),
        .form = ProgramFormClass(m.form),
        .case_text = CaseText(p, m, o_.arch, o_.reading),
        .repro_ptx = ReproText(p, m, target_, o_.arch),
        .what = What(p, m, o_.arch),
        .shape = Shape(p),
    };
    return f;
  }

  void File(const Finding& f, const Program& p) {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<FileResult> filed = store_.File(f);
    if (!filed.ok()) {
      report_.errors.push_back(absl::StrCat("could not file ", f.program->name, ": ",
                                            filed.status().message(), "\n", f.program->case_text));
      return;
    }
    report_.filed.push_back(
        {filed->entry, filed->is_new, f.program->what, f.program->shape, CountSteps(p)});
    if (progress_) {
      progress_(absl::StrCat("[", absl::ToInt64Seconds(absl::Now() - start_), " s] ",
                             filed->is_new ? "filed " : "again ", f.program->name, ": ",
                             f.program->what));
    }
    SuppressIfSingleInstruction(p);
  }

  // A cause down to one instruction is the tuple campaign's: stop
  // generating its variant.
  void SuppressIfSingleInstruction(const Program& p) {
    const std::vector<std::string> spellings = StepSpellings(p);
    if (spellings.size() != 1 || HasLoop(p) || spellings[0] == "mov") return;
    if (std::find(suppressed_.begin(), suppressed_.end(), spellings[0]) == suppressed_.end()) {
      suppressed_.push_back(spellings[0]);
    }
  }

  void Count(int64_t ProgramCampaignReport::*field, int64_t n = 1) {
    std::lock_guard<std::mutex> lock(mu_);
    report_.*field += n;
  }

  void Error(std::string e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (report_.errors.size() < 20) report_.errors.push_back(std::move(e));
  }

  const ProgramCampaignOptions& o_;
  TriageStore store_;
  const PtxTarget target_;
  const std::function<void(const std::string&)>& progress_;
  const absl::Time start_, end_;
  std::mutex mu_;
  std::vector<std::string> suppressed_;
  ProgramCampaignReport report_;
};

}  // namespace

const char* ProgramFormClass(ProgramInputs form) {
  return form == ProgramInputs::kImmediate ? "immediate-fold" : "runtime-claim";
}

absl::StatusOr<ProgramCampaignReport> RunProgramCampaign(
    const ProgramCampaignOptions& options,
    const std::function<void(const std::string&)>& progress) {
  PTXDIFF_ASSIGN_OR_RETURN(const SassArch sass, FindSassArch(options.arch));
  const std::optional<PtxTarget> target = TargetForDevice(sass.sm);
  if (!target) return absl::InvalidArgumentError(absl::StrCat("no PTX target for ", options.arch));
  PTXDIFF_ASSIGN_OR_RETURN(TriageStore store, TriageStore::Open(options.triage_dir, true));
  const absl::Time start = absl::Now();
  Campaign campaign(options, std::move(store), *target, progress);
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, options.threads); ++t) {
    pool.emplace_back([&campaign, &options, t] { campaign.Worker(options.seed + t); });
  }
  for (std::thread& t : pool) t.join();
  ProgramCampaignReport report = campaign.TakeReport();
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return report;
}

}  // namespace ptxdiff
