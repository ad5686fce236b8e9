#include "backends/ptxas/ptx_module.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/carry_support.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// Each result gets an 8-byte slot: the widest result fits, and 16-bit
// results leave gaps that would show a store wider than asked for. A `.cc`
// tuple's slot is twice as long: its flag word follows at kFlagWordOffset.
constexpr int kSlotBytes = 8;
constexpr int kFlagWordBytes = 4;

// CC.CF's registers: the setter's discarded sum, the reader's flag word.
constexpr char kCarryScratch[] = "%cc_in";
constexpr char kFlagWord[] = "%cc_out";

int SlotBytes(const Variant& v) {
  return HasCarryOut(v) ? 2 * kSlotBytes : kSlotBytes;
}

bool UsesCarryFlag(const Variant& v) { return HasCarryOut(v) || HasCarryIn(v); }

// `bits` in hex, exactly `width` bits wide, so that the constant ptxas
// sees is the operand and nothing is truncated.
std::string Immediate(uint64_t bits, int width) {
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  return absl::StrFormat("0x%0*x", width / 4, bits);
}

// The bits a result is stored as: a predicate as a byte (1 or 0).
int StoredWidth(const Variant& v) { return std::max(8, ResultWidth(v)); }

// The kernel parameter of runtime source `i` of the kernel's tuple `t`.
std::string ParamName(int t, const Variant& v, int i) {
  return absl::StrCat("t", t, "_", SourceName(v, i));
}

// Appends one tuple's lines; returns how many lines it took. `t` is its
// index in the kernel, which names its parameters.
int AppendTuple(const PtxTuple& tuple, int t, int64_t offset,
                std::string& text) {
  const Variant& v = tuple.variant;
  // Sources are registers 0..3 and the destination 4 in every tuple; ptxas
  // renames them, so reusing them tuple after tuple costs nothing.
  std::vector<std::string> sources;
  int lines = 2;  // the instruction and the store
  for (int i = 0; i < NumSources(v); ++i) {
    const int width = SourceWidth(v, i);
    if (IsCarryInSource(v, i)) {  // cf: a 32-bit constant for the setter
      sources.push_back(PtxRegister(32, i));
      ++lines;
      absl::StrAppend(&text, PtxSetRegister(32, sources.back(),
                                            Immediate(tuple.operands.v[i], 1)));
      continue;
    }
    if (MustBeImmediate(v, i)) {  // lop3's LUT: in the instruction text
      sources.push_back(Immediate(tuple.operands.v[i], width));
      continue;
    }
    sources.push_back(PtxRegister(width, i));
    ++lines;
    absl::StrAppend(
        &text, tuple.IsRuntime(i)
                   ? PtxLoadParam(width, sources.back(), ParamName(t, v, i))
                   : PtxSetRegister(width, sources.back(),
                                    Immediate(tuple.operands.v[i], width)));
  }
  const int width = ResultWidth(v);
  std::string dest = PtxRegister(width, 4);
  if (const int cf = CarryInSource(v); cf >= 0) {
    absl::StrAppend(&text, PtxSetCarryIn(v, sources[cf], kCarryScratch));
    ++lines;
  }
  absl::StrAppend(&text, "  ", PtxInstruction(v, dest, sources), ";\n");
  if (HasCarryOut(v)) {
    absl::StrAppend(&text, PtxReadCarryOut(v, kFlagWord));
    ++lines;
  }
  if (width == 1) {  // setp's predicate, as the byte 1 or 0
    const std::string byte = PtxRegister(16, 4);
    absl::StrAppend(&text, "  selp.u16 ", byte, ", 1, 0, ", dest, ";\n");
    dest = byte;
    ++lines;
  }
  absl::StrAppend(&text, "  st.global.b", StoredWidth(v), " [%ptr1+", offset,
                  "], ", dest, ";\n");
  if (HasCarryOut(v)) {
    absl::StrAppend(&text, "  st.global.b32 [%ptr1+", offset + kFlagWordOffset,
                    "], ", kFlagWord, ";\n");
    ++lines;
  }
  return lines;
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The entry's parameters: the output pointer, then each runtime source of
// each tuple, named after the tuple's index in the kernel.
std::string Parameters(std::span<const PtxTuple> tuples) {
  return KernelParamList(
      tuples, [&](int t, int i) { return ParamName(t, tuples[t].variant, i); });
}

void AppendKernel(std::span<const PtxTuple> tuples, int first_tuple,
                  PtxModule& module) {
  const int kernel = static_cast<int>(module.kernels.size());
  module.kernels.push_back(absl::StrCat("k", kernel));
  module.kernel_begin.push_back(first_tuple);
  std::string& text = module.text;
  absl::StrAppend(&text, ".visible .entry ", module.kernels.back(), "(",
                  Parameters(tuples), ")\n{\n", "  .reg .pred %p<5>;\n",
                  "  .reg .b16 %h<5>;\n  .reg .b32 %r<5>;\n",
                  "  .reg .b64 %rd<5>;\n  .reg .b64 %ptr<2>;\n");
  if (std::any_of(tuples.begin(), tuples.end(),
                  [](const PtxTuple& t) { return UsesCarryFlag(t.variant); })) {
    absl::StrAppend(&text, "  .reg .b32 ", kCarryScratch, ", ", kFlagWord,
                    ";\n");
  }
  absl::StrAppend(&text, "  ld.param.u64 %ptr0, [out];\n",
                  "  cvta.to.global.u64 %ptr1, %ptr0;\n");
  int line = CountLines(text) + 1;
  int64_t offset = 0;
  for (size_t t = 0; t < tuples.size(); ++t) {
    const PtxTuple& tuple = tuples[t];
    const int lines = AppendTuple(tuple, static_cast<int>(t), offset, text);
    module.slots.push_back({.kernel = kernel,
                            .offset = offset,
                            .bytes = StoredWidth(tuple.variant) / 8,
                            .flag_word = HasCarryOut(tuple.variant),
                            .first_line = line,
                            .last_line = line + lines - 1});
    line += lines;
    offset += SlotBytes(tuple.variant);
  }
  absl::StrAppend(&text, "  ret;\n}\n");
}

}  // namespace

PtxModule BuildPtxModule(std::span<const PtxTuple> tuples,
                         const ModuleOptions& options) {
  PtxModule module;
  module.text = absl::StrFormat(
      ".version %d.%d\n.target %s\n.address_size 64\n",
      options.ptx_version / 10, options.ptx_version % 10, options.target);
  const size_t per_kernel = std::max(1, options.tuples_per_kernel);
  size_t begin = 0;
  for (size_t k = 0; begin < tuples.size(); ++k) {
    const size_t size =
        k < options.kernel_sizes.size()
            ? static_cast<size_t>(std::max(1, options.kernel_sizes[k]))
            : per_kernel;
    const size_t count = std::min(size, tuples.size() - begin);
    AppendKernel(tuples.subspan(begin, count), static_cast<int>(begin), module);
    begin += count;
  }
  module.kernel_begin.push_back(static_cast<int>(tuples.size()));
  return module;
}

int TupleAtLine(const PtxModule& module, int line) {
  // Slots are in line order: binary search for the last one starting at or
  // before `line`.
  auto it = std::upper_bound(
      module.slots.begin(), module.slots.end(), line,
      [](int l, const ResultSlot& slot) { return l < slot.first_line; });
  if (it == module.slots.begin()) return -1;
  --it;
  if (line > it->last_line) return -1;
  return static_cast<int>(it - module.slots.begin());
}

namespace {

// The byte just past `slot`'s flag word or result.
int64_t SlotsEnd(const ResultSlot& slot) {
  return slot.offset + (slot.flag_word ? 2 : 1) * kSlotBytes;
}

// The little-endian value of image bytes [at, at + size), if each of them was
// stored and the `slack` bytes after them were not.
std::optional<uint64_t> StoredValue(const std::vector<int>& image, int64_t at,
                                    int size, int slack) {
  uint64_t value = 0;
  for (int b = 0; b < size + slack; ++b) {
    const int byte = image[at + b];
    if ((byte == -1) != (b >= size)) return std::nullopt;
    if (b < size) value |= uint64_t(byte) << (8 * b);
  }
  return value;
}

}  // namespace

bool ReadKernelResults(const PtxModule& module, int kernel,
                       std::span<const ConstantStore> stores,
                       std::vector<int>& image,
                       std::vector<SlotValue>& results) {
  const int begin = module.kernel_begin[kernel];
  const int end = module.kernel_begin[kernel + 1];
  // The kernel's output as bytes; -1 where nothing was stored.
  image.assign(end == begin ? 0 : SlotsEnd(module.slots[end - 1]), -1);
  for (const ConstantStore& store : stores) {
    if (store.offset < 0 ||
        store.offset + store.size > static_cast<int64_t>(image.size())) {
      return false;
    }
    for (int b = 0; b < store.size; ++b) {
      int& byte = image[store.offset + b];
      if (byte != -1) return false;
      byte = (store.words[b / 4] >> (8 * (b % 4))) & 0xff;
    }
  }
  results.clear();
  for (int t = begin; t < end; ++t) {
    const ResultSlot& slot = module.slots[t];
    const std::optional<uint64_t> bits =
        StoredValue(image, slot.offset, slot.bytes, kSlotBytes - slot.bytes);
    if (!bits.has_value()) return false;
    SlotValue value{.bits = *bits};
    if (slot.flag_word) {
      const std::optional<uint64_t> word =
          StoredValue(image, slot.offset + kFlagWordOffset, kFlagWordBytes,
                      kSlotBytes - kFlagWordBytes);
      if (!word.has_value()) return false;
      value.flag_word = static_cast<uint32_t>(*word);
    }
    results.push_back(value);
  }
  return true;
}

std::optional<std::vector<SlotValue>> KernelResults(
    const PtxModule& module, int kernel,
    std::span<const ConstantStore> stores) {
  std::vector<int> image;
  std::vector<SlotValue> results;
  if (!ReadKernelResults(module, kernel, stores, image, results)) {
    return std::nullopt;
  }
  return results;
}

}  // namespace ptxdiff
