#include "worker/backends/ptx_cmd/ptx_cmd_backend.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "protocol/backend_names.h"
#include "worker/backends/carry_support.h"
#include "worker/backends/cuda/kernel_gen.h"

namespace ptxdiff {
namespace {

// The buffers are the GPU's memory image, which is little-endian.
static_assert(std::endian::native == std::endian::little);

constexpr size_t kOutputTailBytes = 1000;

struct Config {
  std::string command;
  PtxTarget target;
  absl::Duration timeout = absl::Seconds(10);
  absl::Duration batch_timeout = absl::Seconds(45);
  int jobs = 2;
};

absl::StatusOr<PtxTarget> ParseArch(absl::string_view arch) {
  absl::string_view digits = arch;
  int sm = 0;
  if (absl::ConsumePrefix(&digits, "sm_")) {
    // sm_90a, sm_100f: the suffix names features these kernels do not use.
    while (!digits.empty() && absl::ascii_isalpha(digits.back())) {
      digits.remove_suffix(1);
    }
  }
  std::optional<PtxTarget> target;
  if (absl::SimpleAtoi(digits, &sm) && digits != arch) {
    target = TargetForDevice(sm);
  }
  if (!target.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ptx-cmd backend option arch=", arch, ": expected sm_50 or newer"));
  }
  return *target;
}

absl::StatusOr<Config> ParseConfig(const KeyValues& options) {
  Config config;
  config.command = OptionValue(options, "command").value_or("");
  for (absl::string_view placeholder : {"{ptx}", "{in}", "{out}"}) {
    if (!absl::StrContains(config.command, placeholder)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the ptx-cmd command '", config.command,
                       "' does not mention ", placeholder,
                       "; it runs a PTX module: e.g. ptx-cmd:'my-tool {ptx} "
                       "{in} {out}' (docs/kernel-abi.md)"));
    }
  }
  PTXDIFF_ASSIGN_OR_RETURN(
      config.target, ParseArch(OptionValue(options, "arch").value_or("sm_90")));
  int timeout_ms = 10000, batch_timeout_ms = 45000;
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptx-cmd", "timeout_ms", 1,
                                    24 * 3600 * 1000, timeout_ms));
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptx-cmd", "batch_timeout_ms", 1,
                                    24 * 3600 * 1000, batch_timeout_ms));
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptx-cmd", "jobs", 1, 64, config.jobs));
  config.timeout = absl::Milliseconds(timeout_ms);
  config.batch_timeout = absl::Milliseconds(batch_timeout_ms);
  return config;
}

// The input buffer: each tuple's a, b, c, d as u64, 32 bytes per tuple.
std::string InputBuffer(const ResolvedBatch& request,
                        const std::vector<uint32_t>& positions) {
  std::string bytes(positions.size() * kTupleBytes, '\0');
  for (size_t i = 0; i < positions.size(); ++i) {
    const Operands& operands = request.tuples[positions[i]].operands;
    static_assert(sizeof(operands.v) == kTupleBytes);
    std::memcpy(bytes.data() + i * kTupleBytes, operands.v, kTupleBytes);
  }
  return bytes;
}

// One variant's tuples of a batch: run through the command once.
struct Job {
  Variant variant;
  std::vector<uint32_t> positions;  // into the request's tuples
  // Filled by RunJob: a value per position, or why there is none.
  std::vector<uint64_t> values;
  std::vector<uint64_t> flag_words;  // a carry variant's (HasCarryOut)
  std::string failure;
  absl::Status error;  // the worker's own failure (no temporary directory)
};

// `bytes` (the command's {out}) as `job`'s values and flag words.
void ReadOutput(absl::string_view bytes, Job& job) {
  const size_t per_tuple = ResultBytes(job.variant);
  job.values.resize(job.positions.size());
  if (HasCarryOut(job.variant)) job.flag_words.resize(job.positions.size());
  for (size_t i = 0; i < job.positions.size(); ++i) {
    std::memcpy(&job.values[i], bytes.data() + i * per_tuple, kResultBytes);
    if (per_tuple == kCarryResultBytes) {
      std::memcpy(&job.flag_words[i],
                  bytes.data() + i * per_tuple + kResultBytes, kResultBytes);
    }
  }
}

// `job`'s values into `results`, with the carry its flag words say for a
// carry variant; a flag word no correct CC.CF reader leaves is declined.
void AddResults(const Job& job, std::span<TupleResult> results,
                Declines& declines) {
  const Variant& v = job.variant;
  for (size_t i = 0; i < job.positions.size(); ++i) {
    TupleResult& result = results[job.positions[i]];
    result = {.bits = job.values[i]};
    if (!HasCarryOut(v)) continue;
    if (const std::optional<bool> carry =
            CarryOfFlagWord(v, job.flag_words[i])) {
      result.carry = *carry;
    } else {
      declines.Add(std::span(job.positions).subspan(i, 1),
                   DeclineCode::kNotEvaluable,
                   UnreadableFlagWordMessage(v, job.flag_words[i]));
    }
  }
}

class PtxCmdBackend : public Backend {
 public:
  explicit PtxCmdBackend(Config config) : config_(std::move(config)) {}

 protected:
  WorkerIdentity Describe() const override {
    return {.name = std::string(kPtxCmdBackend),
            .version = "1",
            .toolchain = config_.command,
            .device = absl::StrCat("PTX for sm_", config_.target.sm),
            // The kernels read CC.CF back after every `.cc` instruction.
            .carry = true};
  }

  std::optional<std::string> WhyUnsupported(const Variant& v) const override {
    std::optional<std::string> why =
        ::ptxdiff::WhyUnsupported(v, config_.target.sm, MaxPtxOfDriver(INT_MAX));
    if (!why.has_value()) return std::nullopt;
    return absl::StrCat("not run as PTX for sm_", config_.target.sm, ": ", *why);
  }

  absl::Status RunSupported(const ResolvedBatch& request,
                            RunReply& reply) override;

 private:
  // One job per variant, in order of first appearance.
  std::vector<Job> MakeJobs(const ResolvedBatch& request) const;
  void RunJobs(const ResolvedBatch& request, std::vector<Job>& jobs) const;
  void RunJob(const ResolvedBatch& request, absl::Time deadline, Job& job) const;
  // The command's failure on `job`, for its decline message.
  std::string Failure(const Job& job, absl::string_view what,
                      const std::string& output_path) const;

  Config config_;
};

absl::Status PtxCmdBackend::RunSupported(const ResolvedBatch& request,
                                         RunReply& reply) {
  reply.messages.clear();
  reply.results.assign(request.tuples.size(), TupleResult{});
  std::vector<Job> jobs = MakeJobs(request);
  RunJobs(request, jobs);
  Declines declines(reply);
  for (const Job& job : jobs) {
    PTXDIFF_RETURN_IF_ERROR(job.error);
    if (!job.failure.empty()) {
      declines.Add(job.positions, DeclineCode::kOther, job.failure);
      continue;
    }
    AddResults(job, reply.results, declines);
  }
  return absl::OkStatus();
}

// One job per variant, in order of first appearance.
std::vector<Job> PtxCmdBackend::MakeJobs(const ResolvedBatch& request) const {
  std::vector<Job> jobs;
  for (VariantGroup& group : GroupByVariant(request)) {
    jobs.push_back({.variant = request.variants[group.variant_index],
                    .positions = std::move(group.positions)});
  }
  return jobs;
}

void PtxCmdBackend::RunJobs(const ResolvedBatch& request,
                            std::vector<Job>& jobs) const {
  const absl::Time deadline = absl::Now() + config_.batch_timeout;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      RunJob(request, deadline, jobs[i]);
    }
  };
  const int threads = std::min<int>(config_.jobs, jobs.size());
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

void PtxCmdBackend::RunJob(const ResolvedBatch& request, absl::Time deadline,
                           Job& job) const {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) {
    job.failure = absl::StrCat(
        "ptx-cmd: not run: the batch's time budget (batch_timeout_ms=",
        absl::ToInt64Milliseconds(config_.batch_timeout),
        ") was spent on the variants before ", Spell(job.variant));
    return;
  }
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("ptxdiff-ptx-cmd");
  if (!dir.ok()) {
    job.error = dir.status();
    return;
  }
  const std::string ptx = (*dir)->File("kernel.ptx");
  const std::string in = (*dir)->File("in.bin");
  const std::string out = (*dir)->File("out.bin");
  // Beside, not inside, what the tool sees as its files.
  const std::string log = (*dir)->File("ptxdiff-command-output.txt");
  job.error = WriteFile(ptx, RegisterModule(job.variant, config_.target));
  if (job.error.ok()) job.error = WriteFile(in, InputBuffer(request, job.positions));
  if (!job.error.ok()) return;

  const std::string command = absl::StrReplaceAll(
      config_.command, {{"{ptx}", ShellQuote(ptx)},
                        {"{in}", ShellQuote(in)},
                        {"{out}", ShellQuote(out)},
                        {"{n}", absl::StrCat(job.positions.size())}});
  const absl::Duration timeout = std::min(config_.timeout, left);
  absl::StatusOr<ProcessOutcome> outcome =
      RunProcess({"/bin/sh", "-c", command},
                 {.output_path = log,
                  .working_directory = (*dir)->path(),
                  .timeout = timeout});
  if (!outcome.ok()) {
    job.error = outcome.status();
    return;
  }
  if (!outcome->ok()) {
    job.failure = Failure(job, outcome->Describe(timeout), log);
    return;
  }
  const absl::StatusOr<std::string> bytes = ReadFile(out);
  const size_t per_tuple = ResultBytes(job.variant);
  const size_t expected = job.positions.size() * per_tuple;
  if (!bytes.ok()) {
    job.failure = Failure(job, "it exited 0 but wrote no {out} file", log);
    return;
  }
  if (bytes->size() != expected) {
    job.failure =
        Failure(job,
                absl::StrCat("it exited 0 but wrote ", bytes->size(),
                             " bytes to {out}, not ", expected, " (", per_tuple,
                             " per tuple, ", job.positions.size(), " tuples)"),
                log);
    return;
  }
  ReadOutput(*bytes, job);
}

std::string PtxCmdBackend::Failure(const Job& job, absl::string_view what,
                                   const std::string& output_path) const {
  const std::string tail = std::string(absl::StripTrailingAsciiWhitespace(
      ReadFileTail(output_path, kOutputTailBytes)));
  return absl::StrCat("ptx-cmd: command '", config_.command, "' failed on ",
                      Spell(job.variant), " (", job.positions.size(),
                      job.positions.size() == 1 ? " tuple): " : " tuples): ",
                      what,
                      tail.empty() ? "; it printed nothing"
                                   : absl::StrCat("; its output ends:\n", tail));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> MakePtxCmdBackend(
    const KeyValues& options) {
  PTXDIFF_ASSIGN_OR_RETURN(Config config, ParseConfig(options));
  return std::make_unique<PtxCmdBackend>(std::move(config));
}

}  // namespace ptxdiff
