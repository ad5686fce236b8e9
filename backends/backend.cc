#include "backends/backend.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {

namespace {

// A backend that answers more or fewer tuples than it was given is broken.
absl::Status CheckCount(const RunReply& reply, size_t tuples) {
  if (reply.results.size() == tuples) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("the backend answered ",
                                          reply.results.size(), " of ", tuples,
                                          " tuples"));
}

}  // namespace

std::vector<VariantGroup> GroupByVariant(const ResolvedBatch& batch) {
  std::vector<VariantGroup> groups;
  std::vector<int> group_of(batch.variants.size(), -1);
  for (uint32_t i = 0; i < batch.tuples.size(); ++i) {
    const uint32_t v = batch.tuples[i].variant_index;
    if (group_of[v] < 0) {
      group_of[v] = static_cast<int>(groups.size());
      groups.push_back({.variant_index = v});
    }
    groups[group_of[v]].positions.push_back(i);
  }
  return groups;
}

void Declines::Add(std::span<const uint32_t> positions, DeclineCode code,
                   const std::string& message) {
  const uint32_t index = reply_.InternMessage(message);
  for (uint32_t p : positions) {
    reply_.results[p] = {
        .kind = ResultKind::kDecline, .code = code, .message = index};
  }
}

WorkerIdentity Backend::Identity() const {
  // What a backend runs does not change after construction: worked out once
  // (77k variants; a worker answers HELLO within the client's deadline).
  if (!supports_.has_value()) supports_ = SupportsList();
  WorkerIdentity id = Describe();
  id.supports = *supports_;
  return id;
}

std::vector<std::string> Backend::SupportsList() const {
  // A family's opcode where every variant runs, else the spellings of those
  // that do.
  std::vector<std::string> supports;
  for (const FamilyInfo& family : AllFamilies()) {
    const absl::Span<const Variant> variants = VariantsOf(family.family);
    if (std::none_of(variants.begin(), variants.end(), [&](const Variant& v) {
          return WhyUnsupported(v).has_value();
        })) {
      supports.emplace_back(family.opcode);
      continue;
    }
    for (const Variant& v : variants) {
      if (!WhyUnsupported(v).has_value()) supports.push_back(Spell(v));
    }
  }
  return supports;
}

namespace {

// What Backend::Run decided for each spelling of a request.
struct Admission {
  std::vector<int> resolved;         // index into variants, or -1: declined
  std::vector<std::string> why_not;  // for the declined
};

// The declines of `admission` merged with `ran`, the backend's answers to
// the admitted tuples (in order), into one reply for all of `request`.
RunReply Merge(const RunRequest& request, const Admission& admission,
               RunReply ran) {
  RunReply reply;
  reply.messages = std::move(ran.messages);
  reply.results.reserve(request.tuples.size());
  // Each distinct reason once in `messages` (two variants may share one).
  std::vector<uint32_t> message(request.spellings.size());
  for (size_t i = 0; i < request.spellings.size(); ++i) {
    if (admission.resolved[i] < 0)
      message[i] = reply.InternMessage(admission.why_not[i]);
  }
  size_t next = 0;
  for (const WireTuple& t : request.tuples) {
    if (admission.resolved[t.variant_index] >= 0) {
      reply.results.push_back(ran.results[next++]);
    } else {
      reply.results.push_back({.kind = ResultKind::kDecline,
                               .code = DeclineCode::kUnsupportedVariant,
                               .message = message[t.variant_index]});
    }
  }
  return reply;
}

}  // namespace

absl::StatusOr<ModuleRun> Backend::RunModule(const std::string& module,
                                             const std::string& in, size_t n) {
  return absl::UnimplementedError(
      absl::StrCat("the ", Describe().name, " backend runs no modules"));
}

absl::Status Backend::Run(const RunRequest& request, RunReply& reply) {
  for (const WireTuple& t : request.tuples) {
    // The decoder checks this; a request built in process might not.
    if (t.variant_index >= request.spellings.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("a tuple has variant index ", t.variant_index, " of ",
                       request.spellings.size()));
    }
  }
  // Each spelling once.
  ResolvedBatch batch;
  Admission admission{std::vector<int>(request.spellings.size(), -1),
                      std::vector<std::string>(request.spellings.size())};
  for (size_t i = 0; i < request.spellings.size(); ++i) {
    absl::StatusOr<Variant> v = ParseVariant(request.spellings[i]);
    if (!v.ok()) {
      admission.why_not[i] =
          absl::StrCat("unknown variant '", request.spellings[i], "'");
    } else if (std::optional<std::string> why = WhyUnsupported(*v)) {
      admission.why_not[i] = *std::move(why);
    } else {
      admission.resolved[i] = static_cast<int>(batch.variants.size());
      batch.variants.push_back(*v);
    }
  }
  // Every variant runs: the request's tuples as they are.
  if (batch.variants.size() == request.spellings.size()) {
    batch.tuples = request.tuples;
    reply = RunReply();
    PTXDIFF_RETURN_IF_ERROR(RunSupported(batch, reply));
    return CheckCount(reply, request.tuples.size());
  }
  std::vector<WireTuple> admitted;
  admitted.reserve(request.tuples.size());
  for (const WireTuple& t : request.tuples) {
    const int index = admission.resolved[t.variant_index];
    if (index >= 0)
      admitted.push_back({static_cast<uint32_t>(index), t.operands, t.runtime});
  }
  batch.tuples = admitted;
  RunReply ran;
  PTXDIFF_RETURN_IF_ERROR(RunSupported(batch, ran));
  PTXDIFF_RETURN_IF_ERROR(CheckCount(ran, admitted.size()));
  reply = Merge(request, admission, std::move(ran));
  return absl::OkStatus();
}

std::optional<std::string> OptionValue(const KeyValues& options,
                                       absl::string_view key) {
  std::optional<std::string> value;
  for (const auto& [k, v] : options) {
    if (k == key) value = v;
  }
  return value;
}

absl::Status IntOption(const KeyValues& options, absl::string_view backend,
                       absl::string_view key, int min, int max, int& out) {
  const std::optional<std::string> text = OptionValue(options, key);
  if (!text.has_value()) return absl::OkStatus();
  int value = 0;
  if (!absl::SimpleAtoi(*text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(backend, " backend option ", key, "=", *text,
                     ": expected an integer in [", min, ", ", max, "]"));
  }
  out = value;
  return absl::OkStatus();
}

}  // namespace ptxdiff
