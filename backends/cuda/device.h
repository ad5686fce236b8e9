// The device the CUDA backend runs on, and owning handles for what it
// allocates there.
//
// Each handle frees its resource with the matching driver call when it goes
// out of scope, ignoring the result: a failed free cannot be acted on, and a
// lost context is reported by the call that notices it, not by cleanup.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_DEVICE_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_DEVICE_H_

#include <cuda.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "backends/cuda/driver_api.h"

namespace ptxdiff {

// A driver resource of type `Handle`, released by `Release`.
template <typename Handle, CUresult (CudaDriver::*Release)(Handle)>
class Owned {
 public:
  Owned() = default;
  Owned(CudaDriver& driver, Handle handle)
      : driver_(&driver), handle_(handle) {}
  Owned(Owned&& other) noexcept
      : driver_(other.driver_),
        handle_(std::exchange(other.handle_, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      Reset();
      driver_ = other.driver_;
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  ~Owned() { Reset(); }

  Handle get() const { return handle_; }
  // Gives the resource up unreleased: for one a kernel that never ends
  // still uses, whose release would wait for it.
  void Abandon() { handle_ = Handle{}; }
  void Reset() {
    if (handle_ != Handle{}) (void)(driver_->*Release)(handle_);
    handle_ = Handle{};
  }

 private:
  CudaDriver* driver_ = nullptr;
  Handle handle_{};
};

using OwnedStream = Owned<CUstream, &CudaDriver::StreamDestroy>;
using OwnedModule = Owned<CUmodule, &CudaDriver::ModuleUnload>;
using OwnedDeviceMemory = Owned<CUdeviceptr, &CudaDriver::MemFree>;
using OwnedPinnedMemory = Owned<void*, &CudaDriver::MemFreeHost>;

// A stream that does not synchronize with the legacy default stream.
absl::StatusOr<OwnedStream> CreateStream(CudaDriver& driver);
absl::StatusOr<OwnedDeviceMemory> AllocateDevice(CudaDriver& driver,
                                                 size_t bytes);
// Page-locked host memory: async copies from and to it overlap kernels.
absl::StatusOr<OwnedPinnedMemory> AllocatePinned(CudaDriver& driver,
                                                 size_t bytes);

// Device `ordinal` with its primary context retained and current on the
// calling thread; released on destruction.
class DeviceContext {
 public:
  // cuInit, then the device and its properties. NotFound for an ordinal
  // that does not exist (naming how many devices there are).
  static absl::StatusOr<std::unique_ptr<DeviceContext>> Open(CudaDriver& driver,
                                                             int ordinal);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int ordinal() const { return ordinal_; }
  int sm() const { return sm_; }  // compute capability, 90 for 9.0
  int multiprocessors() const { return multiprocessors_; }
  int driver_version() const { return driver_version_; }  // 13000 for 13.0
  const std::string& name() const { return name_; }
  // "NVIDIA H100 (sm_90, device 0, 132 SMs)".
  std::string Describe() const;

 private:
  explicit DeviceContext(CudaDriver& driver) : driver_(driver) {}
  absl::Status Init(int ordinal);

  CudaDriver& driver_;
  CUdevice device_ = 0;
  bool retained_ = false;
  int ordinal_ = 0;
  int sm_ = 0;
  int multiprocessors_ = 0;
  int driver_version_ = 0;
  std::string name_;
};

// "13.0" for cuDriverGetVersion's 13000.
std::string CudaVersionText(int version);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_DEVICE_H_
