#include "backends/cuda/testing/fake_cuda_driver.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "backends/cuda/kernel_gen.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kImageMagic = "FAKE-CUBIN\n";

// The CC.CF setter (writing %cc_in) or reader (writing %cc_out) in a line of
// the generator's kernels, if the line is one; the stores of %cc_out are not.
std::optional<FakeCudaDriver::CarryLine> ParseCarryLine(
    absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (!absl::ConsumeSuffix(&line, ";")) return std::nullopt;
  const size_t space = line.find(' ');
  if (space == absl::string_view::npos) return std::nullopt;
  std::vector<std::string> operands =
      absl::StrSplit(line.substr(space + 1), ", ");
  if (operands.empty() ||
      (operands[0] != "%cc_in" && operands[0] != "%cc_out")) {
    return std::nullopt;
  }
  absl::StatusOr<Variant> v = ParseVariant(line.substr(0, space));
  if (!v.ok()) return std::nullopt;
  const bool sets_flag = operands[0] == "%cc_in";
  operands.erase(operands.begin());
  return FakeCudaDriver::CarryLine{sets_flag, *v, std::move(operands)};
}

// The value of a CC.CF line's source: tuple operand K for `%srcK` (as wide
// as the tuple's variant reads it), else an immediate.
uint64_t CarrySourceValue(const Variant& v, const Operands& operands,
                          absl::string_view token) {
  uint64_t value = 0;
  int k = 0;
  if (absl::ConsumePrefix(&token, "%src") && absl::SimpleAtoi(token, &k) &&
      k >= 0 && k < NumSources(v)) {
    const int width = SourceWidth(v, k);
    return width >= 64 ? operands.v[k]
                       : operands.v[k] & ((uint64_t{1} << width) - 1);
  }
  if (absl::ConsumePrefix(&token, "0x")) {
    (void)absl::SimpleHexAtoi(token, &value);
  } else {
    (void)absl::SimpleAtoi(token, &value);
  }
  return value;
}

// `line` run on `operands` with the incoming CC.CF `flag`: its result.
Result RunCarryLine(const FakeCudaDriver::CarryLine& line, const Variant& v,
                    const Operands& operands, bool flag) {
  Operands in;
  for (size_t i = 0; i < line.sources.size(); ++i) {
    in.v[i] = CarrySourceValue(v, operands, line.sources[i]);
  }
  if (const int cf = CarryInSource(line.variant); cf >= 0) in.v[cf] = flag;
  return Evaluate(line.variant, in);
}

template <typename T>
uintptr_t Id(T handle) {
  return reinterpret_cast<uintptr_t>(handle);
}
template <typename T>
T Handle(uintptr_t id) {
  return reinterpret_cast<T>(id);
}

const char* NameOf(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS:
      return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE:
      return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_NO_DEVICE:
      return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE:
      return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE:
      return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_INVALID_CONTEXT:
      return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_INVALID_PTX:
      return "CUDA_ERROR_INVALID_PTX";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case CUDA_ERROR_INVALID_HANDLE:
      return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_NOT_FOUND:
      return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_READY:
      return "CUDA_ERROR_NOT_READY";
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
      return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case CUDA_ERROR_LAUNCH_FAILED:
      return "CUDA_ERROR_LAUNCH_FAILED";
    case CUDA_ERROR_STUB_LIBRARY:
      return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NOT_SUPPORTED:
      return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_UNKNOWN:
      return "CUDA_ERROR_UNKNOWN";
    default:
      return nullptr;
  }
}

}  // namespace

FakeCudaDriver::FakeCudaDriver(Config config) : config_(std::move(config)) {}

FakeCudaDriver::~FakeCudaDriver() {
  if (config_.leaks_at_exit != nullptr) *config_.leaks_at_exit = Leaks();
  for (const auto& [pointer, size] : pinned_) delete[] pointer;
}

void FakeCudaDriver::FailCall(absl::string_view method, CUresult result,
                              int nth) {
  const std::string name(method);
  failures_[name][call_counts_[name] + nth] = result;
}

void FakeCudaDriver::FailEveryCall(absl::string_view method, CUresult result) {
  always_failing_[std::string(method)] = result;
}

void FakeCudaDriver::RejectPtxContaining(std::string needle, std::string log) {
  rejections_.push_back({std::move(needle), std::move(log)});
}

void FakeCudaDriver::FaultOnLaunch(int nth, CUresult result) {
  fault_launch_ = launch_count_ + nth;
  fault_result_ = result;
}

void FakeCudaDriver::CorruptVariant(std::string spelling, uint64_t mask) {
  corruptions_[std::move(spelling)] = mask;
}

void FakeCudaDriver::FaultOnPtxContaining(std::string needle, CUresult result) {
  ptx_faults_.emplace_back(std::move(needle), result);
}

void FakeCudaDriver::HangOnPtxContaining(std::string needle) {
  ptx_hangs_.push_back(std::move(needle));
}

void FakeCudaDriver::IgnoreSaturation(std::string spelling) {
  unsaturated_.insert(std::move(spelling));
}

void FakeCudaDriver::LeaveCarryFlagUnwritten(std::string spelling) {
  carry_flag_unwritten_.insert(std::move(spelling));
}

int FakeCudaDriver::CallCount(absl::string_view method) const {
  auto it = call_counts_.find(std::string(method));
  return it == call_counts_.end() ? 0 : it->second;
}

std::string FakeCudaDriver::Leaks() const {
  std::string leaks;
  if (retains_ != 0) absl::StrAppend(&leaks, retains_, " context retains\n");
  if (!links_.empty()) absl::StrAppend(&leaks, links_.size(), " link states\n");
  if (!modules_.empty()) absl::StrAppend(&leaks, modules_.size(), " modules\n");
  if (!device_memory_.empty()) {
    absl::StrAppend(&leaks, device_memory_.size(), " device allocations\n");
  }
  if (!pinned_.empty()) {
    absl::StrAppend(&leaks, pinned_.size(), " pinned buffers\n");
  }
  if (!streams_.empty()) absl::StrAppend(&leaks, streams_.size(), " streams\n");
  return leaks;
}

std::optional<CUresult> FakeCudaDriver::Enter(absl::string_view method,
                                              std::string args) {
  const std::string name(method);
  const int n = ++call_counts_[name];
  calls_.push_back(absl::StrCat(name, "(", args, ")"));
  if (auto f = failures_.find(name); f != failures_.end()) {
    if (auto r = f->second.find(n); r != f->second.end()) return r->second;
  }
  if (auto f = always_failing_.find(name); f != always_failing_.end()) {
    return f->second;
  }
  if (sticky_ != CUDA_SUCCESS) return sticky_;
  return std::nullopt;
}

CUresult FakeCudaDriver::Init(unsigned int flags) {
  if (auto r = Enter("Init", absl::StrCat(flags))) return *r;
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult FakeCudaDriver::DriverGetVersion(int* version) {
  if (auto r = Enter("DriverGetVersion", "")) return *r;
  *version = config_.driver_version;
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::GetErrorName(CUresult error, const char** name) {
  // Not logged and never failing: every error message calls it.
  *name = NameOf(error);
  return *name == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult FakeCudaDriver::DeviceGetCount(int* count) {
  if (auto r = Enter("DeviceGetCount", "")) return *r;
  *count = config_.device_count;
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::DeviceGet(CUdevice* device, int ordinal) {
  if (auto r = Enter("DeviceGet", absl::StrCat(ordinal))) return *r;
  if (ordinal < 0 || ordinal >= config_.device_count) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::DeviceGetName(char* name, int length,
                                       CUdevice device) {
  if (auto r = Enter("DeviceGetName", absl::StrCat(device))) return *r;
  const std::string text = absl::StrCat(
      config_.device_name, device == 0 ? "" : absl::StrCat(" #", device));
  const size_t n = std::min<size_t>(text.size(), length - 1);
  std::memcpy(name, text.data(), n);
  name[n] = '\0';
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::DeviceGetAttribute(int* value,
                                            CUdevice_attribute attribute,
                                            CUdevice device) {
  if (auto r = Enter("DeviceGetAttribute", absl::StrCat(attribute))) return *r;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = config_.sm / 10;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = config_.sm % 10;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = config_.multiprocessors;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult FakeCudaDriver::DevicePrimaryCtxRetain(CUcontext* context,
                                                CUdevice device) {
  if (auto r = Enter("DevicePrimaryCtxRetain", absl::StrCat(device))) return *r;
  ++retains_;
  *context = Handle<CUcontext>(0x100 + device);
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::DevicePrimaryCtxRelease(CUdevice device) {
  if (auto r = Enter("DevicePrimaryCtxRelease", absl::StrCat(device))) {
    return *r;
  }
  if (retains_ == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --retains_;
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::CtxSetCurrent(CUcontext context) {
  if (auto r = Enter("CtxSetCurrent", "")) return *r;
  return retains_ > 0 && Id(context) >= 0x100 ? CUDA_SUCCESS
                                              : CUDA_ERROR_INVALID_CONTEXT;
}

FakeCudaDriver::LogBuffers FakeCudaDriver::FindLogs(unsigned int n,
                                                    CUjit_option* options,
                                                    void** values) {
  LogBuffers logs;
  for (unsigned int i = 0; i < n; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) {
      logs.error = static_cast<char*>(values[i]);
    } else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
      logs.error_size = reinterpret_cast<uintptr_t>(values[i]);
      logs.error_size_slot = &values[i];
    }
  }
  return logs;
}

void FakeCudaDriver::WriteLog(const LogBuffers& logs, absl::string_view text) {
  if (logs.error == nullptr || logs.error_size == 0) return;
  const size_t n = std::min(text.size(), logs.error_size - 1);
  std::memcpy(logs.error, text.data(), n);
  logs.error[n] = '\0';
  *logs.error_size_slot = reinterpret_cast<void*>(uintptr_t{n + 1});
}

CUresult FakeCudaDriver::LinkCreate(unsigned int num_options,
                                    CUjit_option* options, void** option_values,
                                    CUlinkState* state) {
  if (auto r = Enter("LinkCreate", "")) return *r;
  const uintptr_t id = next_handle_++;
  links_[id].logs = FindLogs(num_options, options, option_values);
  *state = Handle<CUlinkState>(id);
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::LinkAddData(CUlinkState state, CUjitInputType type,
                                     void* data, size_t size, const char* name,
                                     unsigned int, CUjit_option*, void**) {
  if (auto r = Enter("LinkAddData", absl::StrCat(size))) return *r;
  auto it = links_.find(Id(state));
  if (it == links_.end()) return CUDA_ERROR_INVALID_HANDLE;
  const char* text = static_cast<const char*>(data);
  // The driver reads PTX up to its NUL and wants `size` to count it.
  if (type != CU_JIT_INPUT_PTX || size == 0 || text[size - 1] != '\0') {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const absl::string_view ptx(text, size - 1);
  for (const auto& [needle, log] : rejections_) {
    if (absl::StrContains(ptx, needle)) {
      WriteLog(it->second.logs, log);
      return CUDA_ERROR_INVALID_PTX;
    }
  }
  if (!absl::StrContains(ptx, ".version ")) {
    WriteLog(it->second.logs, "ptxas fatal: no .version directive");
    return CUDA_ERROR_INVALID_PTX;
  }
  it->second.ptx = std::string(ptx);
  compiled_.push_back(it->second.ptx);
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::LinkComplete(CUlinkState state, void** image,
                                      size_t* size) {
  if (auto r = Enter("LinkComplete", "")) return *r;
  auto it = links_.find(Id(state));
  if (it == links_.end() || it->second.ptx.empty()) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  it->second.image = absl::StrCat(kImageMagic, it->second.ptx);
  *image = it->second.image.data();
  *size = it->second.image.size();
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::LinkDestroy(CUlinkState state) {
  if (auto r = Enter("LinkDestroy", "")) return *r;
  return links_.erase(Id(state)) == 1 ? CUDA_SUCCESS
                                      : CUDA_ERROR_INVALID_HANDLE;
}

std::optional<FakeCudaDriver::Module> FakeCudaDriver::ParseImage(
    absl::string_view text) const {
  if (!absl::ConsumePrefix(&text, kImageMagic)) return std::nullopt;
  Module module;
  if (absl::StartsWith(text, "// ptxdiff batch: ")) {
    absl::StatusOr<class RegisterKernel> kernel = RegisterKernel::Parse(text);
    if (!kernel.ok()) return std::nullopt;
    // "// tuples 0..3: bfe.s32": the (first) segment's variant. A module
    // of programs (program/program_ptx.h) has none.
    const size_t at = text.find("// tuples ");
    if (at != absl::string_view::npos) {
      const size_t colon = text.find(": ", at);
      module.spelling = std::string(
          text.substr(colon + 2, text.find('\n', colon) - colon - 2));
      auto v = ParseVariant(module.spelling);
      if (!v.ok()) return std::nullopt;
      module.variant = *v;
    }
    module.entries.push_back({.name = kernel->entry()});
    module.batch =
        std::make_shared<const class RegisterKernel>(*std::move(kernel));
    return module;
  }
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "// ptxdiff variant: ")) {
      auto v = ParseVariant(rest);
      if (!v.ok()) return std::nullopt;
      module.variant = *v;
      module.spelling = std::string(rest);
    } else if (absl::ConsumePrefix(&rest, ".visible .entry ")) {
      Entry entry;
      entry.name = std::string(rest.substr(0, rest.find('(')));
      entry.immediate = absl::StartsWith(entry.name, "ptxdiff_immediate_");
      module.entries.push_back(std::move(entry));
    } else if (std::optional<CarryLine> carry = ParseCarryLine(line)) {
      (carry->sets_flag ? module.carry_setter : module.carry_reader) =
          std::move(carry);
    } else if (absl::ConsumePrefix(&rest, "  // tuple ")) {
      if (module.entries.empty()) return std::nullopt;
      std::vector<absl::string_view> fields = absl::StrSplit(
          rest.substr(rest.find(':') + 1), ' ', absl::SkipEmpty());
      Operands operands;
      for (size_t i = 0; i < fields.size() && i < kMaxSources; ++i) {
        if (!absl::SimpleHexAtoi(fields[i], &operands.v[i])) {
          return std::nullopt;
        }
      }
      module.entries.back().tuples.push_back(operands);
    }
  }
  if (module.spelling.empty() || module.entries.empty()) return std::nullopt;
  return module;
}

CUresult FakeCudaDriver::ModuleLoadDataEx(CUmodule* module, const void* image,
                                          unsigned int num_options,
                                          CUjit_option* options,
                                          void** option_values) {
  if (auto r = Enter("ModuleLoadDataEx", "")) return *r;
  const LogBuffers logs = FindLogs(num_options, options, option_values);
  const absl::string_view text = static_cast<const char*>(image);
  std::optional<Module> parsed = ParseImage(text);
  if (!parsed.has_value()) {
    WriteLog(logs, "fake driver: not an image this device can load");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  for (const auto& [needle, result] : ptx_faults_) {
    if (absl::StrContains(text, needle)) parsed->fault = result;
  }
  for (const std::string& needle : ptx_hangs_) {
    parsed->hangs |= absl::StrContains(text, needle);
  }
  const uintptr_t id = next_handle_++;
  modules_[id] = std::move(*parsed);
  *module = Handle<CUmodule>(id);
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::ModuleUnload(CUmodule module) {
  if (auto r = Enter("ModuleUnload", "")) return *r;
  return modules_.erase(Id(module)) == 1 ? CUDA_SUCCESS
                                         : CUDA_ERROR_INVALID_HANDLE;
}

CUresult FakeCudaDriver::ModuleGetFunction(CUfunction* function,
                                           CUmodule module, const char* name) {
  if (auto r = Enter("ModuleGetFunction", name)) return *r;
  auto it = modules_.find(Id(module));
  if (it == modules_.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (size_t e = 0; e < it->second.entries.size(); ++e) {
    if (it->second.entries[e].name == name) {
      const uintptr_t id = next_handle_++;
      functions_[id] = {it->first, e};
      *function = Handle<CUfunction>(id);
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult FakeCudaDriver::MemAlloc(CUdeviceptr* pointer, size_t bytes) {
  if (auto r = Enter("MemAlloc", absl::StrCat(bytes))) return *r;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  *pointer = next_device_address_;
  device_memory_[*pointer].assign(bytes, 0xee);  // garbage, as on a device
  // A gap after each allocation, so that an overrun is not another buffer.
  next_device_address_ += (bytes + 0xffff) / 0x10000 * 0x10000 + 0x10000;
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::MemFree(CUdeviceptr pointer) {
  if (auto r = Enter("MemFree", "")) return *r;
  return device_memory_.erase(pointer) == 1 ? CUDA_SUCCESS
                                            : CUDA_ERROR_INVALID_VALUE;
}

CUresult FakeCudaDriver::MemHostAlloc(void** pointer, size_t bytes,
                                      unsigned int flags) {
  if (auto r = Enter("MemHostAlloc", absl::StrCat(bytes))) return *r;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  auto* memory = new uint8_t[bytes];
  std::memset(memory, 0xdd, bytes);
  pinned_[memory] = bytes;
  *pointer = memory;
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::MemFreeHost(void* pointer) {
  if (auto r = Enter("MemFreeHost", "")) return *r;
  auto it = pinned_.find(static_cast<const uint8_t*>(pointer));
  if (it == pinned_.end()) return CUDA_ERROR_INVALID_VALUE;
  delete[] it->first;
  pinned_.erase(it);
  return CUDA_SUCCESS;
}

uint8_t* FakeCudaDriver::DeviceBytes(CUdeviceptr pointer, size_t bytes) {
  auto it = device_memory_.upper_bound(pointer);
  if (it == device_memory_.begin()) return nullptr;
  --it;
  const CUdeviceptr offset = pointer - it->first;
  if (offset + bytes > it->second.size()) return nullptr;
  return it->second.data() + offset;
}

bool FakeCudaDriver::IsPinned(const void* pointer, size_t bytes) const {
  const auto* p = static_cast<const uint8_t*>(pointer);
  auto it = pinned_.upper_bound(p);
  if (it == pinned_.begin()) return false;
  --it;
  return p + bytes <= it->first + it->second;
}

CUresult FakeCudaDriver::MemcpyHtoDAsync(CUdeviceptr destination,
                                         const void* source, size_t bytes,
                                         CUstream stream) {
  if (auto r = Enter("MemcpyHtoDAsync",
                     absl::StrCat("stream=", Id(stream), " bytes=", bytes))) {
    return *r;
  }
  auto s = streams_.find(Id(stream));
  if (s == streams_.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (!IsPinned(source, bytes)) return CUDA_ERROR_INVALID_VALUE;
  s->second.push_back([this, destination, source, bytes] {
    uint8_t* device = DeviceBytes(destination, bytes);
    if (device == nullptr) return CUDA_ERROR_ILLEGAL_ADDRESS;
    std::memcpy(device, source, bytes);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::MemcpyDtoHAsync(void* destination, CUdeviceptr source,
                                         size_t bytes, CUstream stream) {
  if (auto r = Enter("MemcpyDtoHAsync",
                     absl::StrCat("stream=", Id(stream), " bytes=", bytes))) {
    return *r;
  }
  auto s = streams_.find(Id(stream));
  if (s == streams_.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (!IsPinned(destination, bytes)) return CUDA_ERROR_INVALID_VALUE;
  s->second.push_back([this, destination, source, bytes] {
    const uint8_t* device = DeviceBytes(source, bytes);
    if (device == nullptr) return CUDA_ERROR_ILLEGAL_ADDRESS;
    std::memcpy(destination, device, bytes);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::StreamCreate(CUstream* stream, unsigned int flags) {
  if (auto r = Enter("StreamCreate", absl::StrCat(flags))) return *r;
  const uintptr_t id = next_handle_++;
  streams_[id];
  *stream = Handle<CUstream>(id);
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::StreamDestroy(CUstream stream) {
  if (auto r = Enter("StreamDestroy", absl::StrCat(Id(stream)))) return *r;
  if (!streams_.contains(Id(stream))) return CUDA_ERROR_INVALID_HANDLE;
  // Work already queued still completes, as on a device.
  const CUresult result = RunStream(Id(stream));
  streams_.erase(Id(stream));
  return result;
}

CUresult FakeCudaDriver::RunStream(uintptr_t stream) {
  std::deque<Work>& work = streams_[stream];
  while (!work.empty()) {
    Work next = std::move(work.front());
    work.pop_front();
    const CUresult result = next();
    if (result != CUDA_SUCCESS) {
      if (IsStickyCudaError(result)) sticky_ = result;
      work.clear();
      return result;
    }
  }
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::StreamQuery(CUstream stream) {
  if (auto r = Enter("StreamQuery", absl::StrCat("stream=", Id(stream)))) {
    return *r;
  }
  if (!streams_.contains(Id(stream))) return CUDA_ERROR_INVALID_HANDLE;
  if (busy_polls_ < 0 || hung_streams_.contains(Id(stream))) {
    return CUDA_ERROR_NOT_READY;
  }
  if (busy_polls_ > 0 && !streams_[Id(stream)].empty()) {
    --busy_polls_;
    return CUDA_ERROR_NOT_READY;
  }
  return RunStream(Id(stream));
}

CUresult FakeCudaDriver::StreamSynchronize(CUstream stream) {
  if (auto r =
          Enter("StreamSynchronize", absl::StrCat("stream=", Id(stream)))) {
    return *r;
  }
  if (!streams_.contains(Id(stream))) return CUDA_ERROR_INVALID_HANDLE;
  return RunStream(Id(stream));
}

CUresult FakeCudaDriver::LaunchKernel(
    CUfunction function, unsigned int grid_x, unsigned int grid_y,
    unsigned int grid_z, unsigned int block_x, unsigned int block_y,
    unsigned int block_z, unsigned int shared_bytes, CUstream stream,
    void** params, void** extra) {
  if (auto r = Enter("LaunchKernel",
                     absl::StrCat("stream=", Id(stream), " grid=", grid_x,
                                  " block=", block_x))) {
    return *r;
  }
  auto f = functions_.find(Id(function));
  auto s = streams_.find(Id(stream));
  if (f == functions_.end() || s == streams_.end()) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  const bool bad_shape = grid_x == 0 || grid_y != 1 || grid_z != 1 ||
                         block_x == 0 || block_x > 1024 || block_y != 1 ||
                         block_z != 1 || shared_bytes != 0 ||
                         params == nullptr || extra != nullptr;
  if (bad_shape) return CUDA_ERROR_INVALID_VALUE;
  auto m = modules_.find(f->second.first);
  if (m == modules_.end()) return CUDA_ERROR_INVALID_HANDLE;
  const Entry& entry = m->second.entries[f->second.second];
  // Parameters are read now, as the driver copies them at launch.
  LaunchRecord launch = {.entry = entry.name,
                         .variant = m->second.spelling,
                         .immediate = entry.immediate,
                         .grid = grid_x,
                         .block = block_x,
                         .stream = stream};
  if (entry.immediate) {
    launch.out = *static_cast<CUdeviceptr*>(params[0]);
  } else {
    launch.in = *static_cast<CUdeviceptr*>(params[0]);
    launch.out = *static_cast<CUdeviceptr*>(params[1]);
    launch.n = *static_cast<uint32_t*>(params[2]);
  }
  launches_.push_back(launch);
  if (m->second.hangs) hung_streams_.insert(Id(stream));
  const int fault = ++launch_count_ == fault_launch_ ? 1 : 0;
  s->second.push_back(
      [this, launch, module = f->second.first, index = f->second.second,
       fault] { return RunKernel(launch, module, index, fault); });
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::RunKernel(const LaunchRecord& launch, uintptr_t module,
                                   size_t entry, int fault) {
  if (fault) return fault_result_;
  auto m = modules_.find(module);
  // Unloaded while the kernel was queued: its code is gone.
  if (m == modules_.end()) return CUDA_ERROR_LAUNCH_FAILED;
  if (m->second.fault != CUDA_SUCCESS) return m->second.fault;
  const Entry& e = m->second.entries[entry];
  if (m->second.batch != nullptr) return RunBatchKernel(launch, m->second);
  const size_t n = e.immediate ? e.tuples.size() : launch.n;
  const int bytes = ResultBytes(m->second.variant);
  uint8_t* out = DeviceBytes(launch.out, n * bytes);
  const uint8_t* in = e.immediate ? nullptr : DeviceBytes(launch.in, n * 32);
  if (out == nullptr || (!e.immediate && in == nullptr)) {
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  for (size_t i = 0; i < n; ++i) {
    Operands operands;
    if (e.immediate) {
      operands = e.tuples[i];
    } else {
      std::memcpy(operands.v, in + 32 * i, 32);
    }
    const auto [bits, flag_word] = RunTuple(m->second, operands);
    std::memcpy(out + bytes * i, &bits, 8);
    if (bytes == kCarryResultBytes) {
      std::memcpy(out + bytes * i + 8, &flag_word, 8);
    }
  }
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::RunBatchKernel(const LaunchRecord& launch,
                                        const Module& module) {
  const size_t n = launch.n;
  uint8_t* out = DeviceBytes(launch.out, n * kBatchResultBytes);
  const uint8_t* in = DeviceBytes(launch.in, n * kTupleBytes);
  if (out == nullptr || in == nullptr) return CUDA_ERROR_ILLEGAL_ADDRESS;
  RegisterKernel::RunOptions options;
  // The launch's shape, its blocks and threads capped at a warp's worth
  // (a grid-stride kernel covers every tuple on any shape; a module of
  // programs needs its block's lanes).
  options.grid = {.blocks = std::min(launch.grid, 3u),
                  .threads = std::min(launch.block, 32u)};
  for (const std::string& s : unsaturated_) {
    Variant v = *ParseVariant(s);
    Variant wraps = v;
    wraps.sat = false;
    options.substitutions.emplace_back(v, wraps);
  }
  for (const std::string& s : carry_flag_unwritten_) {
    options.carry_flag_unwritten.push_back(*ParseVariant(s));
  }
  absl::StatusOr<std::string> ran = module.batch->Run(
      absl::string_view(reinterpret_cast<const char*>(in), n * kTupleBytes),
      options);
  if (!ran.ok()) return CUDA_ERROR_LAUNCH_FAILED;
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, ran->data() + kBatchResultBytes * i, 8);
    bits = Corrupt(module.spelling, bits);
    std::memcpy(ran->data() + kBatchResultBytes * i, &bits, 8);
  }
  std::memcpy(out, ran->data(), ran->size());
  return CUDA_SUCCESS;
}

std::pair<uint64_t, uint64_t> FakeCudaDriver::RunTuple(
    const Module& module, const Operands& operands) const {
  const Variant& declared = module.variant;
  bool flag = false;  // stale: nothing set it
  if (module.carry_setter.has_value()) {
    flag = RunCarryLine(*module.carry_setter, declared, operands, flag).carry;
  }
  Operands in = operands;
  if (const int cf = CarryInSource(declared); cf >= 0) in.v[cf] = flag;
  const Variant v = Computed(module);
  const Result result = Evaluate(v, in);
  if (HasCarryOut(v) && !carry_flag_unwritten_.contains(module.spelling)) {
    flag = result.carry;
  }
  uint64_t flag_word = 0;
  if (module.carry_reader.has_value()) {
    flag_word =
        RunCarryLine(*module.carry_reader, declared, operands, flag).bits;
  }
  return {Corrupt(module.spelling, result.bits), flag_word};
}

Variant FakeCudaDriver::Computed(const Module& module) const {
  Variant v = module.variant;
  if (unsaturated_.contains(module.spelling)) v.sat = false;
  return v;
}

uint64_t FakeCudaDriver::Corrupt(const std::string& spelling,
                                 uint64_t bits) const {
  auto it = corruptions_.find(spelling);
  return it == corruptions_.end() ? bits : bits ^ it->second;
}

}  // namespace ptxdiff
