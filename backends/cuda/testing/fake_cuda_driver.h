// A CudaDriver that simulates a GPU on the host, for the backend's tests.
//
// Memory, streams, the JIT, modules and kernels are modelled closely enough
// that the backend's mistakes show up as wrong results or errors, as they
// would on a device:
//   - stream work (copies, kernels) runs only when the stream is queried or
//     synchronized, reading and writing host buffers at that moment, so a
//     host that touches a buffer before the copy has run sees stale data;
//   - async copies must use pinned memory from MemHostAlloc, device accesses
//     must stay inside an allocation (else CUDA_ERROR_ILLEGAL_ADDRESS);
//   - the "JIT" accepts the PTX the generator writes (NUL-terminated, with a
//     `.version`), and images are "FAKE-CUBIN" text that only this fake
//     loads;
//   - a kernel computes the oracle's result for the variant named in its
//     module, for register-mode kernels from the operand buffer and the
//     launch parameters, for immediate-mode kernels from the tuples in the
//     module text; a kernel whose module was unloaded fails;
//   - a tuple has a CC.CF: the module's setter line (`... %cc_in, ...`) and
//     reader line (`... %cc_out, ...`) are executed through the oracle
//     before and after the instruction, which reads and writes the flag, and
//     the reader's flag word is stored after the result (docs/kernel-abi.md);
//     without a setter the flag is stale (0), without a reader no word is
//     stored;
//   - a sticky error makes every later call fail with it, as a lost context
//     does.
// Every call is logged, and any call can be made to fail.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_TESTING_FAKE_CUDA_DRIVER_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_TESTING_FAKE_CUDA_DRIVER_H_

#include <cuda.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "backends/cuda/driver_api.h"
#include "backends/ptx_cmd/testing/register_kernel.h"
#include "isa/variant.h"

namespace ptxdiff {

class FakeCudaDriver : public CudaDriver {
 public:
  struct Config {
    int driver_version = 13000;
    int device_count = 1;
    int sm = 90;
    int multiprocessors = 4;
    std::string device_name = "Fake GPU";
    // If set, receives Leaks() when the fake is destroyed (for tests where
    // the backend owns, and destroys, the driver).
    std::string* leaks_at_exit = nullptr;
  };

  // One kernel launch as the fake saw it.
  struct LaunchRecord {
    std::string entry;
    std::string variant;  // the module's `// ptxdiff variant:` spelling
    bool immediate = false;
    unsigned int grid = 0, block = 0;
    CUstream stream = nullptr;
    CUdeviceptr in = 0, out = 0;  // `in` for register mode only
    uint32_t n = 0;               // register mode: the count parameter
  };

  // A kernel line setting CC.CF (writing %cc_in) or reading it (writing
  // %cc_out), as the fake executes it: its instruction and its source
  // operands (registers `%srcK`, naming tuple operand K, or immediates).
  struct CarryLine {
    bool sets_flag = false;  // the setter; else the reader
    Variant variant;
    std::vector<std::string> sources;
  };

  FakeCudaDriver() : FakeCudaDriver(Config{}) {}
  explicit FakeCudaDriver(Config config);
  ~FakeCudaDriver() override;

  // The `nth` call from now (1 = the next) of `method` (the CudaDriver
  // method name, e.g. "MemAlloc") returns `result` and does nothing.
  void FailCall(absl::string_view method, CUresult result, int nth = 1);
  // Every call of `method` from now on returns `result` and does nothing: an
  // entry point a partial implementation of the driver API answers with
  // CUDA_ERROR_NOT_SUPPORTED.
  void FailEveryCall(absl::string_view method, CUresult result);
  // The JIT rejects PTX containing `needle`, with `log` in its error log.
  void RejectPtxContaining(std::string needle, std::string log);
  // The `nth` kernel launched from now faults with `result` when it runs.
  void FaultOnLaunch(int nth, CUresult result);
  // StreamQuery answers NOT_READY `polls` times before the work runs; -1:
  // forever (a kernel that never ends).
  void SetBusyPolls(int polls) { busy_polls_ = polls; }
  // Kernels of modules whose PTX contains `needle` fault with `result` when
  // they run (a device that traps on one instruction), or never end.
  void FaultOnPtxContaining(std::string needle, CUresult result);
  void HangOnPtxContaining(std::string needle);
  // Results of `spelling` come out XORed with `mask` (a device that differs).
  void CorruptVariant(std::string spelling, uint64_t mask);
  // `spelling` (a `.sat` variant) wraps instead of saturating: its results
  // are those of the same variant without `.sat`.
  void IgnoreSaturation(std::string spelling);
  // `spelling` (a `.cc` variant that reads CC.CF: addc.cc, subc.cc,
  // madc.cc) writes no CC.CF: the flag keeps its carry in. Its result bits
  // stay right.
  void LeaveCarryFlagUnwritten(std::string spelling);

  // "Method(args)" lines, in call order.
  const std::vector<std::string>& calls() const { return calls_; }
  int CallCount(absl::string_view method) const;
  const std::vector<LaunchRecord>& launches() const { return launches_; }
  // PTX texts the JIT compiled, in order.
  const std::vector<std::string>& compiled_ptx() const { return compiled_; }
  // Resources not released, one per line; empty when there are none.
  std::string Leaks() const;

  // CudaDriver.
  CUresult Init(unsigned int flags) override;
  CUresult DriverGetVersion(int* version) override;
  CUresult GetErrorName(CUresult error, const char** name) override;
  CUresult DeviceGetCount(int* count) override;
  CUresult DeviceGet(CUdevice* device, int ordinal) override;
  CUresult DeviceGetName(char* name, int length, CUdevice device) override;
  CUresult DeviceGetAttribute(int* value, CUdevice_attribute attribute,
                              CUdevice device) override;
  CUresult DevicePrimaryCtxRetain(CUcontext* context, CUdevice device) override;
  CUresult DevicePrimaryCtxRelease(CUdevice device) override;
  CUresult CtxSetCurrent(CUcontext context) override;
  CUresult LinkCreate(unsigned int num_options, CUjit_option* options,
                      void** option_values, CUlinkState* state) override;
  CUresult LinkAddData(CUlinkState state, CUjitInputType type, void* data,
                       size_t size, const char* name, unsigned int num_options,
                       CUjit_option* options, void** option_values) override;
  CUresult LinkComplete(CUlinkState state, void** image, size_t* size) override;
  CUresult LinkDestroy(CUlinkState state) override;
  CUresult ModuleLoadDataEx(CUmodule* module, const void* image,
                            unsigned int num_options, CUjit_option* options,
                            void** option_values) override;
  CUresult ModuleUnload(CUmodule module) override;
  CUresult ModuleGetFunction(CUfunction* function, CUmodule module,
                             const char* name) override;
  CUresult MemAlloc(CUdeviceptr* pointer, size_t bytes) override;
  CUresult MemFree(CUdeviceptr pointer) override;
  CUresult MemHostAlloc(void** pointer, size_t bytes,
                        unsigned int flags) override;
  CUresult MemFreeHost(void* pointer) override;
  CUresult MemcpyHtoDAsync(CUdeviceptr destination, const void* source,
                           size_t bytes, CUstream stream) override;
  CUresult MemcpyDtoHAsync(void* destination, CUdeviceptr source, size_t bytes,
                           CUstream stream) override;
  CUresult StreamCreate(CUstream* stream, unsigned int flags) override;
  CUresult StreamDestroy(CUstream stream) override;
  CUresult StreamQuery(CUstream stream) override;
  CUresult StreamSynchronize(CUstream stream) override;
  CUresult LaunchKernel(CUfunction function, unsigned int grid_x,
                        unsigned int grid_y, unsigned int grid_z,
                        unsigned int block_x, unsigned int block_y,
                        unsigned int block_z, unsigned int shared_bytes,
                        CUstream stream, void** params, void** extra) override;

 private:
  // The JIT's log buffers, from the options of a call.
  struct LogBuffers {
    char* error = nullptr;
    size_t error_size = 0;
    void** error_size_slot = nullptr;
  };
  struct LinkState {
    LogBuffers logs;
    std::string ptx, image;
  };
  struct Entry {
    std::string name;
    bool immediate = false;
    std::vector<Operands> tuples;  // immediate mode
  };
  struct Module {
    Variant variant;
    std::string spelling;
    std::vector<Entry> entries;
    std::optional<CarryLine> carry_setter, carry_reader;
    // A batch module (kernel ABI 2: the cuda backend's tuples as written),
    // run by the PTX interpreter of the ptx-cmd tests, the module's own text.
    // (`class`: kernel_gen.h has a function of the same name.)
    std::shared_ptr<const class RegisterKernel> batch;
    // FaultOnPtxContaining's result for its kernels, and
    // HangOnPtxContaining's.
    CUresult fault = CUDA_SUCCESS;
    bool hangs = false;
  };
  using Work = std::function<CUresult()>;

  // Logs the call; the result to return at once (an injected failure or the
  // sticky error), or nullopt to go on.
  std::optional<CUresult> Enter(absl::string_view method, std::string args);
  static LogBuffers FindLogs(unsigned int n, CUjit_option* options,
                             void** values);
  static void WriteLog(const LogBuffers& logs, absl::string_view text);
  std::optional<Module> ParseImage(absl::string_view text) const;
  CUresult RunBatchKernel(const LaunchRecord& launch, const Module& module);
  // Host view of device bytes [pointer, pointer + bytes); nullptr if not
  // inside one allocation.
  uint8_t* DeviceBytes(CUdeviceptr pointer, size_t bytes);
  bool IsPinned(const void* pointer, size_t bytes) const;
  CUresult RunStream(uintptr_t stream);
  CUresult RunKernel(const LaunchRecord& launch, uintptr_t module, size_t entry,
                     int fault);
  uint64_t Corrupt(const std::string& spelling, uint64_t bits) const;
  // One tuple of `module`'s kernel: the result bits, and the flag word the
  // module's CC.CF reader leaves (0 if it has none).
  std::pair<uint64_t, uint64_t> RunTuple(const Module& module,
                                         const Operands& operands) const;
  // The variant whose results the device computes for `module`'s.
  Variant Computed(const Module& module) const;

  Config config_;
  std::vector<std::string> calls_;
  absl::flat_hash_map<std::string, int> call_counts_;
  // method -> (call number at which to fail -> result)
  std::map<std::string, std::map<int, CUresult>, std::less<>> failures_;
  std::map<std::string, CUresult, std::less<>> always_failing_;
  std::vector<std::pair<std::string, std::string>> rejections_;
  std::map<std::string, uint64_t> corruptions_;
  std::set<std::string> unsaturated_;
  std::set<std::string> carry_flag_unwritten_;
  std::vector<std::pair<std::string, CUresult>> ptx_faults_;
  std::vector<std::string> ptx_hangs_;
  std::set<uintptr_t> hung_streams_;  // a kernel that never ends is queued
  int fault_launch_ = 0;              // launch number that faults, 0 for none
  CUresult fault_result_ = CUDA_SUCCESS;
  int launch_count_ = 0;
  int busy_polls_ = 0;
  CUresult sticky_ = CUDA_SUCCESS;

  uintptr_t next_handle_ = 0x1000;
  int retains_ = 0;
  std::map<uintptr_t, LinkState> links_;
  std::map<uintptr_t, Module> modules_;
  std::map<uintptr_t, std::pair<uintptr_t, size_t>>
      functions_;  // module, entry
  std::map<CUdeviceptr, std::vector<uint8_t>> device_memory_;
  CUdeviceptr next_device_address_ = 0x7f0000000000;
  std::map<const uint8_t*, size_t> pinned_;
  std::map<uintptr_t, std::deque<Work>> streams_;
  std::vector<LaunchRecord> launches_;
  std::vector<std::string> compiled_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_TESTING_FAKE_CUDA_DRIVER_H_
