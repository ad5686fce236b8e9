// The CUDA backend's throughput on a GPU, beside the host-device copy
// bandwidth measured in the same run.
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bench/cuda_benchmark [device=N] [mode=register|immediate]
//       [tuples=N] [seconds=S] [copy_mib=N] [cache_dir=PATH]
//
// Prints
//   - pinned host<->device copy bandwidth, and the copy-bound rate it allows
//     (a tuple moves 32 bytes in and 8 out);
//   - the JIT time per register-mode module (what a fresh cache costs the
//     first batches), the fixed cost of a batch (one tuple: a copy in, a
//     launch, a copy out, and the wait) and the added cost of each further
//     launch in a batch;
//   - per family, one representative variant: tuples/s through
//     CudaBackend::Run (packing, copies, kernel, results; no protocol), and
//     the ratio to the copy-bound rate.
// Where there is no CUDA device it prints `skipped: no CUDA device (why)`
// and exits 0. It is not a test.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/device.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/kernel_gen.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

using DriverLoader =
    std::function<absl::StatusOr<std::unique_ptr<CudaDriver>>()>;

struct Settings {
  KeyValues backend_options;  // passed through: device, mode, cache_dir, ...
  int device = 0;
  size_t tuples = size_t{1} << 24;
  double seconds = 2;
  size_t copy_bytes = size_t{256} << 20;
  DriverLoader load_driver;
};

// A backend on a driver of its own (the benchmark's copies use another).
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const Settings& settings,
                                                     KeyValues options) {
  PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> driver,
                           settings.load_driver());
  return MakeCudaBackend(options, std::move(driver));
}

// Median seconds per call of `fn` over at least 3 calls and `budget`, after
// one warm-up call (which JIT-compiles).
template <typename F>
double MedianSeconds(F fn, double budget) {
  if (!fn()) return -1;
  std::vector<double> times;
  const absl::Time start = absl::Now();
  while (times.size() < 3 ||
         absl::ToDoubleSeconds(absl::Now() - start) < budget) {
    const absl::Time t = absl::Now();
    if (!fn()) return -1;
    times.push_back(absl::ToDoubleSeconds(absl::Now() - t));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Bandwidth {
  double to_device = 0;    // bytes/s
  double from_device = 0;  // bytes/s
};

// Pinned copies of `bytes` each way, timed to completion.
absl::StatusOr<Bandwidth> MeasureCopies(CudaDriver& driver, size_t bytes,
                                        double budget) {
  PTXDIFF_ASSIGN_OR_RETURN(OwnedStream stream, CreateStream(driver));
  PTXDIFF_ASSIGN_OR_RETURN(OwnedPinnedMemory host,
                           AllocatePinned(driver, bytes));
  PTXDIFF_ASSIGN_OR_RETURN(OwnedDeviceMemory device,
                           AllocateDevice(driver, bytes));
  std::memset(host.get(), 0x5a, bytes);
  auto copy = [&](bool to_device) {
    const CUresult r = to_device
                           ? driver.MemcpyHtoDAsync(device.get(), host.get(),
                                                    bytes, stream.get())
                           : driver.MemcpyDtoHAsync(host.get(), device.get(),
                                                    bytes, stream.get());
    return r == CUDA_SUCCESS &&
           driver.StreamSynchronize(stream.get()) == CUDA_SUCCESS;
  };
  const double in = MedianSeconds([&] { return copy(true); }, budget / 2);
  const double out = MedianSeconds([&] { return copy(false); }, budget / 2);
  if (in <= 0 || out <= 0) return absl::InternalError("a timed copy failed");
  return Bandwidth{bytes / in, bytes / out};
}

RunRequest Requests(const std::vector<Variant>& variants, size_t per_variant) {
  RunRequest request;
  std::mt19937_64 rng(1);
  std::vector<Operands> operands(per_variant);
  for (size_t i = 0; i < variants.size(); ++i) {
    request.spellings.push_back(Spell(variants[i]));
    FillEdgeTuples(variants[i], rng, operands);
    for (const Operands& o : operands) {
      request.tuples.push_back({static_cast<uint32_t>(i), o});
    }
  }
  return request;
}

// Seconds per Run of `request`; negative (and a message) if it fails.
double TimeRuns(Backend& backend, const RunRequest& request, double budget) {
  RunReply reply;
  return MedianSeconds(
      [&] {
        const absl::Status status = backend.Run(request, reply);
        if (!status.ok()) {
          std::fprintf(stderr, "Run failed: %s\n", status.ToString().c_str());
        }
        return status.ok();
      },
      budget);
}

// One variant of each PTX family that the backend runs: the first whose
// operands and result are all 32-bit (the families the target speaks of),
// else the first.
bool All32Bit(const Variant& v) {
  for (int i = 0; i < NumSources(v); ++i) {
    if (SourceWidth(v, i) != 32) return false;
  }
  return ResultWidth(v) == 32;
}

std::vector<Variant> Representatives(const WorkerIdentity& identity) {
  std::vector<Variant> variants;
  for (const FamilyInfo& family : AllFamilies()) {
    std::optional<Variant> first, first32;
    ForEachVariant(family.family, [&](const Variant& v) {
      if (!identity.Supports(v)) return;
      if (!first.has_value()) first = v;
      if (!first32.has_value() && All32Bit(v)) first32 = v;
    });
    if (first32.has_value()) {
      variants.push_back(*first32);
    } else if (first.has_value()) {
      variants.push_back(*first);
    }
  }
  return variants;
}

// JIT time per register-mode module: a backend without a disk cache runs 64
// new variants once (compiling each) and again (all loaded).
void ReportJit(const Settings& settings) {
  KeyValues options = settings.backend_options;
  options.push_back({"cache_dir", ""});
  options.push_back({"mode", "register"});
  auto backend = MakeBackend(settings, options);
  if (!backend.ok()) return;
  std::vector<Variant> fresh;
  for (const Variant& v : AllVariants()) {
    if (fresh.size() < 64 && v.family == Family::kVmad) fresh.push_back(v);
  }
  const RunRequest request = Requests(fresh, 1);
  RunReply reply;
  const absl::Time start = absl::Now();
  if (!(*backend)->Run(request, reply).ok()) return;
  const double first = absl::ToDoubleSeconds(absl::Now() - start);
  const double again = TimeRuns(**backend, request, 0.2);
  std::printf("JIT compile and load per register-mode module:      %8.1f ms\n",
              (first - again) / fresh.size() * 1e3);
}

void ReportOverheads(Backend& backend, const Settings& settings) {
  const Variant add = *ParseVariant("add.s32");
  const double one = TimeRuns(backend, Requests({add}, 1), settings.seconds);
  // 64 launches in one stage: 64 variants of one tuple each.
  std::vector<Variant> many;
  for (const Variant& v : AllVariants()) {
    if (many.size() < 64 && v.family == Family::kVadd) many.push_back(v);
  }
  const double launches =
      TimeRuns(backend, Requests(many, 1), settings.seconds);
  std::printf("batch of 1 tuple (copy in, launch, copy out, wait): %8.1f us\n",
              one * 1e6);
  std::printf("each further launch in a batch:                     %8.1f us\n",
              (launches - one) / 63 * 1e6);
  // Per-tuple cost from two sizes: the slope is transfer plus kernel time.
  const size_t big = std::min<size_t>(settings.tuples, size_t{1} << 22);
  const double small =
      TimeRuns(backend, Requests({add}, 4096), settings.seconds);
  const double large =
      TimeRuns(backend, Requests({add}, big), settings.seconds);
  std::printf("add.s32 per tuple beyond the fixed cost:            %8.3f ns\n",
              (large - small) / (big - 4096) * 1e9);
}

void ReportFamilies(Backend& backend, const Settings& settings,
                    double copy_bound) {
  std::printf("\n%-48s %12s %12s\n", "variant", "Mtuples/s", "of copy bound");
  for (const Variant& v : Representatives(backend.Identity())) {
    const double seconds =
        TimeRuns(backend, Requests({v}, settings.tuples), settings.seconds);
    if (seconds <= 0) continue;
    const double rate = settings.tuples / seconds;
    std::printf("%-48s %12.1f %12.2f\n", Spell(v).c_str(), rate / 1e6,
                rate / copy_bound);
  }
}

int Main(const Settings& settings) {
  auto driver = settings.load_driver();
  if (!driver.ok()) {
    std::printf("skipped: no CUDA device (%s)\n",
                std::string(driver.status().message()).c_str());
    return 0;
  }
  auto context = DeviceContext::Open(**driver, settings.device);
  if (!context.ok()) {
    std::printf("skipped: no CUDA device (%s)\n",
                std::string(context.status().message()).c_str());
    return 0;
  }
  auto backend = MakeBackend(settings, settings.backend_options);
  if (!backend.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(backend.status().message()).c_str());
    return 1;
  }
  std::printf("%s, %s\n", (*backend)->Identity().device.c_str(),
              (*backend)->Identity().toolchain.c_str());
  auto bandwidth =
      MeasureCopies(**driver, settings.copy_bytes, settings.seconds);
  if (!bandwidth.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(bandwidth.status().message()).c_str());
    return 1;
  }
  // Copies in and out of a stage are serial on one stream; two stages
  // overlap, so this is the bound for one direction at a time.
  const double copy_bound = 1 / (kTupleBytes / bandwidth->to_device +
                                 kResultBytes / bandwidth->from_device);
  std::printf(
      "pinned copies: %.1f GB/s to the device, %.1f GB/s back; "
      "copy-bound rate %.1f Mtuples/s\n",
      bandwidth->to_device / 1e9, bandwidth->from_device / 1e9,
      copy_bound / 1e6);
  ReportJit(settings);
  ReportOverheads(**backend, settings);
  ReportFamilies(**backend, settings, copy_bound);
  return 0;
}

// key=value arguments; nullopt (after a message) for a bad one.
std::optional<Settings> ParseArgs(const std::vector<std::string>& args) {
  Settings settings;
  for (const std::string& arg : args) {
    std::pair<std::string, std::string> kv = absl::StrSplit(arg, '=');
    bool ok = true;
    if (kv.first == "tuples") {
      ok = absl::SimpleAtoi(kv.second, &settings.tuples) &&
           settings.tuples > 4096 && settings.tuples <= kMaxTuplesPerBatch;
    } else if (kv.first == "seconds") {
      ok = absl::SimpleAtod(kv.second, &settings.seconds);
    } else if (kv.first == "copy_mib") {
      ok = absl::SimpleAtoi(kv.second, &settings.copy_bytes) &&
           settings.copy_bytes > 0;
      settings.copy_bytes <<= 20;
    } else {
      if (kv.first == "device") {
        ok = absl::SimpleAtoi(kv.second, &settings.device);
      }
      settings.backend_options.push_back(kv);
    }
    if (!ok) {
      std::fprintf(stderr,
                   "bad argument '%s'; usage: cuda_benchmark [device=N] "
                   "[mode=register|immediate] [tuples=4097..16777216] "
                   "[seconds=S] [copy_mib=N] [cache_dir=PATH]\n",
                   arg.c_str());
      return std::nullopt;
    }
  }
  return settings;
}

}  // namespace

// The benchmark with `args` (key=value), on drivers from `load_driver`: the
// real driver from main(), a simulated one from the smoke test.
int RunCudaBenchmark(const std::vector<std::string>& args,
                     const DriverLoader& load_driver) {
  std::optional<Settings> settings = ParseArgs(args);
  if (!settings.has_value()) return 2;
  settings->load_driver = load_driver;
  return Main(*settings);
}

}  // namespace ptxdiff

#ifndef PTXDIFF_CUDA_BENCHMARK_NO_MAIN
int main(int argc, char** argv) {
  return ptxdiff::RunCudaBenchmark(
      std::vector<std::string>(argv + 1, argv + argc),
      [] { return ptxdiff::LoadCudaDriver(); });
}
#endif
