#include "program/worker_program_backend.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
        .what = absl::StrCat("the worker ", FaultKindName(outcome.fault.kind),
                             ": ", outcome.fault.detail)};
    return c;
  }
  c.cut = true;
  c.why_not = outcome.fault.detail;
  return c;
}

class WorkerProgramBackend : public ProgramBackend {
 public:
  WorkerProgramBackend(WorkerCommand command,
                       std::shared_ptr<const ProgramBackend> presenter,
                       std::unique_ptr<WorkerClient> first)
      : command_(std::move(command)), presenter_(std::move(presenter)) {
    idle_.push_back(std::move(first));
  }
  // Every check on `borrowed`, no pool.
  WorkerProgramBackend(WorkerClient& borrowed,
                       std::shared_ptr<const ProgramBackend> presenter)
      : presenter_(std::move(presenter)), borrowed_(&borrowed) {}

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
    std::vector<ProgramOutcome> outcomes;
    if (borrowed_ != nullptr) {
      outcomes = borrowed_->RunPrograms(request);
    } else {
      PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<WorkerClient> client, Take());
      outcomes = client->RunPrograms(request);
      Give(std::move(client));
    }
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
        return absl::InternalError(o.fault.detail);
      } else {
        checks.push_back(CheckOfOutcome(o));
      }
    }
    return checks;
  }

  // An idle worker, or a new one: one per thread checking at once.
  absl::StatusOr<std::unique_ptr<WorkerClient>> Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<WorkerClient> c = std::move(idle_.back());
        idle_.pop_back();
        return c;
      }
    }
    return WorkerClient::Start(command_);
  }
  void Give(std::unique_ptr<WorkerClient> client) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(client));
  }

  const WorkerCommand command_;
  const std::shared_ptr<const ProgramBackend> presenter_;
  WorkerClient* const borrowed_ = nullptr;  // set: the only worker
  std::mutex mu_;
  std::vector<std::unique_ptr<WorkerClient>> idle_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ProgramBackend>> MakeWorkerProgramBackend(
    WorkerCommand command, const PresenterOf& presenter_of) {
  PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<WorkerClient> first,
                           WorkerClient::Start(command));
  if (!first->identity().programs) {
    return absl::FailedPreconditionError(
        absl::StrCat("the worker (", first->identity().Describe(),
                     ") runs no programs: its HELLO_REPLY has no programs=1"));
  }
  PTXDIFF_ASSIGN_OR_RETURN(std::shared_ptr<const ProgramBackend> presenter,
                           presenter_of(first->identity()));
  return std::make_unique<WorkerProgramBackend>(
      std::move(command), std::move(presenter), std::move(first));
}

std::unique_ptr<ProgramBackend> WorkerProgramBackendOn(
    WorkerClient& worker, std::shared_ptr<const ProgramBackend> presenter) {
  return std::make_unique<WorkerProgramBackend>(worker, std::move(presenter));
}

absl::StatusOr<std::unique_ptr<ProgramBackend>> MakeWorkerProgramBackend(
    WorkerCommand command, std::shared_ptr<const ProgramBackend> presenter) {
  return MakeWorkerProgramBackend(
      std::move(command),
      [&presenter](const WorkerIdentity&)
          -> absl::StatusOr<std::shared_ptr<const ProgramBackend>> {
        return presenter;
      });
}

}  // namespace ptxdiff
