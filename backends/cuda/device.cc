#include "backends/cuda/device.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxdiff {

absl::StatusOr<OwnedStream> CreateStream(CudaDriver& driver) {
  CUstream stream = nullptr;
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(driver, "create a stream",
                      StreamCreate(&stream, CU_STREAM_NON_BLOCKING)));
  return OwnedStream(driver, stream);
}

absl::StatusOr<OwnedDeviceMemory> AllocateDevice(CudaDriver& driver,
                                                 size_t bytes) {
  CUdeviceptr pointer = 0;
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(driver, "allocate device memory",
                                          MemAlloc(&pointer, bytes)));
  return OwnedDeviceMemory(driver, pointer);
}

absl::StatusOr<OwnedPinnedMemory> AllocatePinned(CudaDriver& driver,
                                                 size_t bytes) {
  void* pointer = nullptr;
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(driver, "allocate pinned host memory",
                                          MemHostAlloc(&pointer, bytes, 0)));
  return OwnedPinnedMemory(driver, pointer);
}

absl::StatusOr<std::unique_ptr<DeviceContext>> DeviceContext::Open(
    CudaDriver& driver, int ordinal) {
  std::unique_ptr<DeviceContext> context(new DeviceContext(driver));
  PTXDIFF_RETURN_IF_ERROR(context->Init(ordinal));
  return context;
}

absl::Status DeviceContext::Init(int ordinal) {
  ordinal_ = ordinal;
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(driver_, "initialize the CUDA driver", Init(0)));
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(driver_, "read the driver version",
                                          DriverGetVersion(&driver_version_)));
  int count = 0;
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(driver_, "count the devices", DeviceGetCount(&count)));
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(
        absl::StrCat("no CUDA device ", ordinal, ": this machine has ", count));
  }
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(driver_, "get the device", DeviceGet(&device_, ordinal)));
  char name[256] = {};
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(driver_, "read the device name",
                      DeviceGetName(name, sizeof(name) - 1, device_)));
  name_ = name;
  int major = 0, minor = 0;
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver_, "read the compute capability",
      DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                         device_)));
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver_, "read the compute capability",
      DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                         device_)));
  sm_ = 10 * major + minor;
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver_, "count the multiprocessors",
      DeviceGetAttribute(&multiprocessors_,
                         CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_)));
  // The primary context, not one of our own: it is the one every other
  // library in the process would share, and it has no creation ABI that
  // changed across driver versions (cuCtxCreate did).
  CUcontext context = nullptr;
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(driver_, "retain the device's primary context",
                      DevicePrimaryCtxRetain(&context, device_)));
  retained_ = true;
  return PTXDIFF_CU_CALL(driver_, "make the context current",
                         CtxSetCurrent(context));
}

DeviceContext::~DeviceContext() {
  if (retained_) (void)driver_.DevicePrimaryCtxRelease(device_);
}

std::string DeviceContext::Describe() const {
  return absl::StrCat(name_, " (sm_", sm_, ", device ", ordinal_, ", ",
                      multiprocessors_, " SMs)");
}

std::string CudaVersionText(int version) {
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

}  // namespace ptxdiff
