#include "backends/ptx_cmd/refusal_memory.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/fnv1a.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kRegisters = "registers";
constexpr absl::string_view kImmediates = "immediates";

// `text` on one line, without the separator.
std::string OneLine(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"\n", " / "}, {"\t", " "}});
}

// The header line up to the target, and after it.
std::string HeaderBefore(absl::string_view command) {
  return absl::StrCat("# what the tool refused: ptx-cmd '", OneLine(command),
                      "', PTX for ");
}
constexpr absl::string_view kHeaderAfter =
    " (delete this file after changing the tool)";

}  // namespace

RefusalMemory::RefusalMemory(absl::string_view dir, absl::string_view command,
                             absl::string_view target)
    : dir_(dir) {
  const std::string identity = absl::StrCat(command, "\n", target);
  path_ = absl::StrFormat("%s/ptx-cmd-%016x.tsv", dir, Fnv1a64(identity));
  header_ = absl::StrCat(HeaderBefore(command), target, kHeaderAfter, "\n");
}

std::vector<std::string> RememberedTargets(absl::string_view dir,
                                           absl::string_view command) {
  std::vector<std::string> targets;
  for (const std::string& path : FilesIn(std::string(dir), ".tsv")) {
    const absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) continue;
    absl::string_view header =
        absl::string_view(*text).substr(0, text->find('\n'));
    if (absl::ConsumePrefix(&header, HeaderBefore(command)) &&
        absl::ConsumeSuffix(&header, kHeaderAfter)) {
      targets.emplace_back(header);
    }
  }
  std::sort(targets.begin(), targets.end());
  return targets;
}

absl::StatusOr<Refusals> RefusalMemory::Load() const {
  Refusals refusals;
  if (access(path_.c_str(), F_OK) != 0) return refusals;
  absl::StatusOr<std::string> text = ReadFile(path_);
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::MaxSplits('\t', 2));
    if (fields.size() != 3 ||
        (fields[0] != kRegisters && fields[0] != kImmediates)) {
      continue;
    }
    const absl::StatusOr<Variant> v = ParseVariant(fields[1]);
    if (!v.ok()) continue;
    refusals.try_emplace(RefusalKey{*v, fields[0] == kImmediates},
                         std::string(fields[2]));
  }
  return refusals;
}

absl::Status RefusalMemory::Remember(const RefusalKey& key,
                                     absl::string_view why) const {
  if (access(path_.c_str(), F_OK) != 0) {
    if (absl::Status made = MakeDirs(dir_); !made.ok()) return made;
    if (absl::Status wrote = AppendToFile(path_, header_); !wrote.ok())
      return wrote;
  }
  return AppendToFile(path_,
                     absl::StrCat(key.second ? kImmediates : kRegisters, "\t",
                                  Spell(key.first), "\t", OneLine(why), "\n"));
}

}  // namespace ptxdiff
