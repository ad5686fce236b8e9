#include "backends/ptx_cmd/refusal_recheck.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/run_id.h"
#include "isa/family_table.h"

namespace ptxdiff {
namespace {

// A variant a second is tried if the first was not run to its end (a
// program check the harness could not judge).
constexpr size_t kSamplesPerMessage = 2;

// The refusals remembered with one message, and variants of them to run.
struct MessageGroup {
  int variants = 0, classes = 0;
  std::vector<RefusalKey> samples;
  void Add(const RefusalKey& k) {
    if (samples.size() < kSamplesPerMessage) samples.push_back(k);
  }
};

// A variant of `c` that may be sent, if it has one.
std::optional<Variant> MemberOf(
    const RefusalClass& c,
    const std::function<bool(const Variant&)>& runnable) {
  for (const Variant& v : VariantsOf(c.family)) {
    if (HasFeature(v, c.feature) && runnable(v)) return v;
  }
  return std::nullopt;
}

std::map<std::string, MessageGroup> GroupByMessage(
    const Remembered& remembered,
    const std::function<bool(const Variant&)>& runnable) {
  std::map<std::string, MessageGroup> groups;
  for (const RefusalClass& c : remembered.classes) {
    MessageGroup& g = groups[c.message];
    ++g.classes;
    if (std::optional<Variant> v = MemberOf(c, runnable))
      g.Add(RefusalKey{*v, c.written});
  }
  for (const auto& [key, why] : remembered.variants) {
    MessageGroup& g = groups[SaidKey(key.first, why)];
    ++g.variants;
    if (runnable(key.first)) g.Add(key);
  }
  return groups;
}

// Whether a re-check of this run kept `message` less than kRecheckEvery
// before `now`.
bool KeptLately(const Remembered& remembered, const std::string& message,
                const Kept& now) {
  const auto it = remembered.kept.find(message);
  return !now.run.empty() && it != remembered.kept.end() &&
         it->second.run == now.run &&
         now.unix_seconds - it->second.unix_seconds <
             absl::ToInt64Seconds(kRecheckEvery);
}

}  // namespace

std::vector<Forgotten> RecheckRemembered(
    const RefusalMemory& memory, Remembered& remembered,
    const std::function<bool(const Variant&)>& runnable, AloneRunner run,
    const Kept& now, absl::Status* error) {
  std::vector<std::pair<std::string, MessageGroup>> groups;
  for (auto& entry : GroupByMessage(remembered, runnable)) {
    if (!entry.second.samples.empty() &&
        !KeptLately(remembered, entry.first, now))
      groups.push_back(std::move(entry));
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) {
                     return a.second.variants + a.second.classes >
                            b.second.variants + b.second.classes;
                   });
  if (groups.size() > kMaxRechecked) groups.resize(kMaxRechecked);
  std::vector<Forgotten> forgotten;
  for (const auto& [message, g] : groups) {
    // Refused (with any message) or not run to its end: kept.
    AloneRun::End end = AloneRun::kUnknown;
    for (size_t i = 0; i < g.samples.size() && end == AloneRun::kUnknown; ++i)
      end = run(g.samples[i].first, g.samples[i].second).end;
    if (end == AloneRun::kRefused && !now.run.empty()) {
      if (absl::Status s = memory.NoteKept(message, now);
          !s.ok() && error != nullptr)
        *error = s;
    }
    if (end != AloneRun::kNotRefused) continue;
    Forgotten f{.unix_seconds = absl::ToUnixSeconds(absl::Now()),
                .variants = g.variants,
                .classes = g.classes,
                .message = message};
    if (absl::Status s = memory.Forget(f); !s.ok() && error != nullptr)
      *error = s;
    ApplyForgotten(f, remembered);
    forgotten.push_back(std::move(f));
  }
  return forgotten;
}

Kept NowInThisRun() {
  return {.unix_seconds = absl::ToUnixSeconds(absl::Now()), .run = ThisRun()};
}

std::string DescribeForgotten(const Forgotten& f) {
  std::string what;
  if (f.variants > 0)
    absl::StrAppend(&what, f.variants,
                    f.variants == 1 ? " refusal" : " refusals");
  if (f.classes > 0) {
    absl::StrAppend(&what, what.empty() ? "" : " and ", f.classes,
                    f.classes == 1 ? " class" : " classes");
  }
  return absl::StrCat(what, " remembered with \"", ShortMessage(f.message),
                      "\"");
}

std::string ForgottenLine(absl::string_view dir, absl::string_view command,
                          int64_t since_unix_seconds,
                          absl::string_view prefix) {
  std::vector<std::string> said;
  for (const Forgotten& f : ForgottenSince(dir, command, since_unix_seconds)) {
    std::string one = DescribeForgotten(f);
    // Each worker of a campaign re-checks at its start.
    if (std::find(said.begin(), said.end(), one) == said.end())
      said.push_back(std::move(one));
  }
  if (said.empty()) return "";
  return absl::StrCat(prefix,
                      "the tool runs now what earlier runs remembered it "
                      "refusing; forgotten, sent again: ",
                      absl::StrJoin(said, "; "), "\n");
}

}  // namespace ptxdiff
