#include "program/worker_program_backend.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "program/program_wire.h"

namespace ptxdiff {
namespace {

// An outcome of WorkerClient::RunPrograms other than a check read back, as
// the check it stands for: a fault of the worker on the program alone, or a
// cut.
ProgramCheck CheckOfOutcome(const ProgramOutcome& outcome) {
  ProgramCheck c;
  if (outcome.kind == ProgramOutcome::kFaulted) {
    // The worker itself fell over on this program alone (twice): a finding
    // of the implementation it runs, as a tuple's fault is.
    c.fault = ProgramFault{
        .kind = outcome.fault.kind == FaultKind::kHang ? CaseFault::kHang
                                                       : CaseFault::kCrash,
        .what = absl::StrCat(WorkerFaultSaid(outcome.fault.kind), ": ",
                             outcome.fault.detail)};
    return c;
  }
  c.cut = true;
  c.why_not = outcome.fault.detail;
  return c;
}

class WorkerProgramBackend : public ProgramBackend {
 public:
  WorkerProgramBackend(WorkerClient& worker,
                       std::shared_ptr<const ProgramBackend> presenter)
      : presenter_(std::move(presenter)), worker_(worker) {}

  std::string Name() const override { return presenter_->Name(); }
  std::string Identity() const override { return presenter_->Identity(); }

  absl::StatusOr<std::vector<ProgramCheck>> Check(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) override {
    return Run(programs, form, reading, deadline, /*until_fault=*/false);
  }
  absl::StatusOr<std::vector<ProgramCheck>> CheckUntilFault(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) override {
    return Run(programs, form, reading, deadline, /*until_fault=*/true);
  }

  std::string Describe(const Program& p,
                       const ProgramMismatch& m) const override {
    return presenter_->Describe(p, m);
  }
  std::string FindingClass(ProgramInputs form) const override {
    return presenter_->FindingClass(form);
  }
  std::string FindingName(ProgramInputs form) const override {
    return presenter_->FindingName(form);
  }
  std::string MismatchClass(const ProgramMismatch& m) const override {
    return presenter_->MismatchClass(m);
  }
  std::string MismatchName(const ProgramMismatch& m) const override {
    return presenter_->MismatchName(m);
  }
  std::string ReproModule(const Program& p, ProgramInputs form) const override {
    return presenter_->ReproModule(p, form);
  }
  std::string ReproInput(const Program& p) const override {
    return presenter_->ReproInput(p);
  }
  std::string ReproModuleOf(std::span<const Program> programs,
                            ProgramInputs form) const override {
    return presenter_->ReproModuleOf(programs, form);
  }
  std::string ReproInputOf(std::span<const Program> programs) const override {
    return presenter_->ReproInputOf(programs);
  }
  std::string ReplayFlags() const override { return presenter_->ReplayFlags(); }
  bool JudgesThreadInputs() const override {
    return presenter_->JudgesThreadInputs();
  }
  bool JudgesLoadedInputs() const override {
    return presenter_->JudgesLoadedInputs();
  }

 private:
  absl::StatusOr<std::vector<ProgramCheck>> Run(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline, bool until_fault) {
    if (programs.empty()) return std::vector<ProgramCheck>();
    const ProgramRunRequest request =
        ProgramRequestOf(programs, form, reading, until_fault, deadline);
    const std::vector<ProgramOutcome> outcomes = worker_.RunPrograms(request);
    std::vector<ProgramCheck> checks;
    checks.reserve(outcomes.size());
    for (const ProgramOutcome& o : outcomes) {
      if (o.kind == ProgramOutcome::kChecked) {
        absl::StatusOr<ProgramCheck> check = DecodeProgramCheck(o.check);
        if (!check.ok()) {
          return absl::InternalError(
              absl::StrCat("the worker's check does not read back: ",
                           check.status().message()));
        }
        checks.push_back(*std::move(check));
      } else if (o.kind == ProgramOutcome::kError) {
        const absl::Status error = absl::InternalError(o.fault.detail);
        return o.fault.kind == FaultKind::kEnvironment
                   ? EnvironmentFailure(error)
                   : error;
      } else {
        checks.push_back(CheckOfOutcome(o));
      }
    }
    return checks;
  }

  const std::shared_ptr<const ProgramBackend> presenter_;
  WorkerClient& worker_;
};

}  // namespace

absl::Status RunsPrograms(const WorkerIdentity& identity) {
  if (identity.programs) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("the worker (", identity.Describe(),
                   ") runs no programs: its HELLO_REPLY has no programs=1"));
}

std::unique_ptr<ProgramBackend> WorkerProgramBackendOn(
    WorkerClient& worker, std::shared_ptr<const ProgramBackend> presenter) {
  return std::make_unique<WorkerProgramBackend>(worker, std::move(presenter));
}

}  // namespace ptxdiff
