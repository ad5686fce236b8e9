#include "backends/ptx_cmd/module_parts.h"

#include <bit>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace ptx_cmd_internal {
namespace {

// The buffers are the GPU's memory image, which is little-endian.
static_assert(std::endian::native == std::endian::little);

// k, for a line of segment k of a batch module: its registers and labels
// are `%vK_...` and `$vK_...` (kernel_gen.h's scopes).
std::optional<size_t> SegmentNamedIn(absl::string_view line) {
  for (size_t at = line.find("v"); at != absl::string_view::npos;
       at = line.find("v", at + 1)) {
    if (at == 0 || (line[at - 1] != '%' && line[at - 1] != '$')) continue;
    size_t end = at + 1;
    while (end < line.size() && absl::ascii_isdigit(line[end])) ++end;
    size_t k = 0;
    if (end > at + 1 && end < line.size() && line[end] == '_' &&
        absl::SimpleAtoi(line.substr(at + 1, end - at - 1), &k)) {
      return k;
    }
  }
  return std::nullopt;
}

}  // namespace

int SegmentWeight(bool written, size_t tuples, size_t dispatch_values) {
  if (written) return 1 + static_cast<int>(tuples / 3);
  return 1 + static_cast<int>(dispatch_values / 4);
}

std::string SegmentName(const Segment& s) {
  return s.written ? absl::StrCat(Spell(s.variant), " with immediates")
                   : Spell(s.variant);
}

void DeclineAll(const Part& part, DeclineCode code, const std::string& message,
                Declines& declines) {
  for (const Segment& s : part.segments)
    declines.Add(s.positions, code, message);
}

std::string InputBuffer(const ResolvedBatch& request, const Part& part) {
  std::string bytes(part.tuples() * kTupleBytes, '\0');
  size_t i = 0;
  for (const Segment& s : part.segments) {
    for (uint32_t p : s.positions) {
      const Operands& operands = request.tuples[p].operands;
      static_assert(sizeof(operands.v) == kTupleBytes);
      std::memcpy(bytes.data() + i++ * kTupleBytes, operands.v, kTupleBytes);
    }
  }
  return bytes;
}

std::vector<Segment> SegmentsOf(const ResolvedBatch& request,
                                const VariantGroup& group, Config::Forms forms,
                                Declines& declines) {
  const Variant& v = request.variants[group.variant_index];
  Segment loop{.variant = v};
  std::vector<Segment> segments;
  for (uint32_t p : group.positions) {
    if (forms == Config::Forms::kAllInRegisters ||
        IsRegisterShape(v, request.tuples[p].runtime)) {
      loop.positions.push_back(p);
      continue;
    }
    if (forms == Config::Forms::kRegisterShapeOnly) {
      declines.Add({&p, 1}, DeclineCode::kOperandForm,
                   "ptx-cmd: forms=0 runs only the register shape (every "
                   "source that may be a runtime value one)");
      continue;
    }
    if (segments.empty() ||
        segments.back().positions.size() == kWrittenSegmentTuples) {
      segments.push_back({.variant = v, .written = true});
    }
    segments.back().positions.push_back(p);
  }
  if (!loop.positions.empty())
    segments.insert(segments.begin(), std::move(loop));
  return segments;
}

std::vector<int> DispatchValuesOf(const ResolvedBatch& request,
                                  const Segment& s) {
  if (DispatchSource(s.variant) < 0) return {};
  std::vector<Operands> operands;
  operands.reserve(s.positions.size());
  for (uint32_t p : s.positions) operands.push_back(request.tuples[p].operands);
  return ::ptxdiff::DispatchValuesOf(s.variant, operands);
}

std::string ModuleFor(const ResolvedBatch& request, const Part& part,
                      const PtxTarget& target, int abi) {
  if (abi == 1) return RegisterModule(part.segments[0].variant, target);
  std::vector<BatchSegment> segments;
  uint32_t first = 0;
  for (const Segment& s : part.segments) {
    const uint32_t count = s.positions.size();
    BatchSegment& segment = segments.emplace_back(
        BatchSegment{.variant = s.variant, .first = first, .count = count});
    if (s.written) {
      for (uint32_t p : s.positions) {
        const WireTuple& t = request.tuples[p];
        segment.written.push_back({s.variant, t.operands, t.runtime});
      }
    } else {
      segment.dispatch_values = DispatchValuesOf(request, s);
    }
    first += count;
  }
  return BatchModule(segments, target);
}

int SlotBytes(const Part& part, int abi) {
  return abi == 1 ? ResultBytes(part.segments[0].variant) : kBatchResultBytes;
}

std::vector<Part> Split(const Part& part, const std::string& why) {
  std::vector<Part> parts;
  if (part.segments.size() > 1) {
    const size_t half = part.segments.size() / 2;
    parts.push_back({.isolating = why});
    parts.back().segments.assign(part.segments.begin(),
                                 part.segments.begin() + half);
    parts.push_back({.isolating = why});
    parts.back().segments.assign(part.segments.begin() + half,
                                 part.segments.end());
    return parts;
  }
  const Segment& s = part.segments[0];
  auto add = [&](size_t from, size_t to) {
    if (from == to) return;
    parts.push_back(
        {.segments = {{s.variant,
                       {s.positions.begin() + from, s.positions.begin() + to},
                       s.written}},
         .isolating = why});
  };
  const size_t n = s.positions.size();
  const size_t middle = 1 + (n - 1) / 2;
  add(0, 1);
  add(1, middle);
  add(middle, n);
  return parts;
}

std::optional<size_t> SegmentOnErrorLine(
    const std::vector<std::string>& error_lines, absl::string_view module) {
  const std::vector<absl::string_view> lines = absl::StrSplit(module, '\n');
  for (absl::string_view error : error_lines) {
    for (size_t at = 0; at < error.size(); ++at) {
      if (!absl::ascii_isdigit(error[at])) continue;
      size_t end = at;
      while (end < error.size() && absl::ascii_isdigit(error[end])) ++end;
      const bool after_colon = at > 0 && error[at - 1] == ':';
      const bool after_line =
          at >= 5 && absl::EqualsIgnoreCase(error.substr(at - 5, 5), "line ");
      size_t number = 0;
      if ((after_colon || after_line) &&
          absl::SimpleAtoi(error.substr(at, end - at), &number) &&
          number >= 1 && number <= lines.size()) {
        if (const std::optional<size_t> k = SegmentNamedIn(lines[number - 1]))
          return k;
      }
      at = end;
    }
  }
  return std::nullopt;
}

}  // namespace ptx_cmd_internal
}  // namespace ptxdiff
