#include "backends/ptx_cmd/refusal_memory.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/fnv1a.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kRegisters = "registers";
constexpr absl::string_view kImmediates = "immediates";
constexpr absl::string_view kClass = "class";
constexpr absl::string_view kDropped = "dropped";
constexpr absl::string_view kForgotten = "forgotten";
constexpr absl::string_view kKept = "kept";

// A memory holds a line per variant refused in each shape, and a few per
// class: tens of MB at most. A file past this is damage, never read whole.
constexpr size_t kMaxMemoryBytes = size_t{256} << 20;

// `text` on one line, without the separator.
std::string OneLine(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"\n", " / "}, {"\t", " "}});
}

// The header line: its start, the command, kHeaderTarget, the target, and
// kHeaderAfter.
constexpr absl::string_view kHeaderStart = "# what the tool refused: ptx-cmd '";
constexpr absl::string_view kHeaderTarget = "', PTX for ";
constexpr absl::string_view kHeaderAfter =
    " (delete this file after changing the tool)";

// A header's command and target; nullopt if `header` is none.
std::optional<std::pair<std::string, std::string>> ParseHeader(
    absl::string_view header) {
  if (!absl::ConsumePrefix(&header, kHeaderStart) ||
      !absl::ConsumeSuffix(&header, kHeaderAfter)) {
    return std::nullopt;
  }
  const size_t target = header.rfind(kHeaderTarget);
  if (target == absl::string_view::npos) return std::nullopt;
  return std::pair{std::string(header.substr(0, target)),
                   std::string(header.substr(target + kHeaderTarget.size()))};
}

// The command and target of the memory file at `path`, from its first line;
// nullopt if it has none; why not if it cannot be read (damage).
absl::StatusOr<std::optional<std::pair<std::string, std::string>>> HeaderOf(
    const std::string& path) {
  const absl::StatusOr<std::string> text =
      ReadRecordFile(path, kMaxMemoryBytes);
  if (!text.ok()) return text.status();
  return ParseHeader(absl::string_view(*text).substr(0, text->find('\n')));
}

// A class line's fields after `class` or `dropped`: shape, family,
// feature, sampled, message.
std::string ClassFields(const RefusalClass& c) {
  return absl::StrCat(c.written ? kImmediates : kRegisters, "\t",
                      OpcodeOf(c.family), "\t",
                      FeatureToken(c.family, c.feature), "\t", c.sampled,
                      "\t", OneLine(c.message));
}

std::optional<RefusalClass> ParseClassFields(
    const std::vector<absl::string_view>& fields) {
  if (fields.size() != 6 ||
      (fields[1] != kRegisters && fields[1] != kImmediates)) {
    return std::nullopt;
  }
  const std::optional<Family> family = FamilyByOpcode(fields[2]);
  if (!family.has_value()) return std::nullopt;
  const std::optional<ClassFeature> feature =
      ParseFeatureToken(*family, fields[3]);
  int sampled = 0;
  if (!feature.has_value() || !absl::SimpleAtoi(fields[4], &sampled))
    return std::nullopt;
  return RefusalClass{.family = *family,
                      .feature = *feature,
                      .written = fields[1] == kImmediates,
                      .message = std::string(fields[5]),
                      .sampled = sampled};
}

// The confirmed classes among `lines`, without those dropped after.
void AddClass(absl::string_view line, std::vector<RefusalClass>& classes) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::MaxSplits('\t', 5));
  if (fields.empty() || (fields[0] != kClass && fields[0] != kDropped)) return;
  const std::optional<RefusalClass> c = ParseClassFields(fields);
  if (!c.has_value()) return;
  const auto same = [&](const RefusalClass& k) {
    return k.family == c->family && k.feature == c->feature &&
           k.written == c->written && k.message == c->message;
  };
  std::erase_if(classes, same);
  if (fields[0] == kClass) classes.push_back(*c);
}

// A `forgotten` line's fields; nullopt if it is none.
std::optional<Forgotten> ParseForgotten(absl::string_view line) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::MaxSplits('\t', 4));
  Forgotten f;
  if (fields.size() != 5 || fields[0] != kForgotten ||
      !absl::SimpleAtoi(fields[1], &f.unix_seconds) ||
      !absl::SimpleAtoi(fields[2], &f.variants) ||
      !absl::SimpleAtoi(fields[3], &f.classes)) {
    return std::nullopt;
  }
  f.message = std::string(fields[4]);
  return f;
}

// A `kept` line's message and when; nullopt if it is none.
std::optional<std::pair<std::string, Kept>> ParseKept(absl::string_view line) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::MaxSplits('\t', 3));
  Kept k;
  if (fields.size() != 4 || fields[0] != kKept ||
      !absl::SimpleAtoi(fields[1], &k.unix_seconds)) {
    return std::nullopt;
  }
  k.run = std::string(fields[2]);
  return std::pair{std::string(fields[3]), std::move(k)};
}

}  // namespace

void ApplyForgotten(const Forgotten& f, Remembered& remembered) {
  for (auto it = remembered.variants.begin();
       it != remembered.variants.end();) {
    const bool same = SaidKey(it->first.first, it->second) == f.message;
    if (same)
      remembered.variants.erase(it++);
    else
      ++it;
  }
  std::erase_if(remembered.classes,
                [&](const RefusalClass& c) { return c.message == f.message; });
  remembered.forgotten.push_back(f);
  remembered.kept.erase(f.message);
}

std::string SaidKey(const Variant& v, absl::string_view why) {
  constexpr absl::string_view kFailed = "ptx-cmd: command '";
  constexpr absl::string_view kSaid = "; it said: ";
  constexpr absl::string_view kEnds = "; its output ends: / ";
  std::string key;
  if (!absl::StartsWith(why, kFailed)) {
    key = std::string(why);  // a program's refusal: kept as its message
  } else if (const size_t said = why.find(kSaid);
             said != absl::string_view::npos) {
    const std::vector<std::string> lines =
        absl::StrSplit(why.substr(said + kSaid.size()), " / ");
    key = RefusalMessage(v, lines, "");
  } else if (const size_t ends = why.find(kEnds);
             ends != absl::string_view::npos) {
    key = RefusalMessage(
        v, {},
        absl::StrReplaceAll(why.substr(ends + kEnds.size()), {{" / ", "\n"}}));
  }
  return key.empty() ? "(said nothing)" : key;
}

RefusalMemory::RefusalMemory(absl::string_view dir, absl::string_view command,
                             absl::string_view target)
    : dir_(dir) {
  const std::string identity = absl::StrCat(command, "\n", target);
  path_ = absl::StrFormat("%s/ptx-cmd-%016x.tsv", dir, Fnv1a64(identity));
  header_ = absl::StrCat(kHeaderStart, OneLine(command), kHeaderTarget, target,
                         kHeaderAfter, "\n");
}

std::vector<std::string> RememberedTargets(absl::string_view dir,
                                           absl::string_view command) {
  std::vector<std::string> targets;
  for (const std::string& path : FilesIn(std::string(dir), ".tsv")) {
    const auto header = HeaderOf(path);
    if (header.ok() && *header && (*header)->first == OneLine(command))
      targets.push_back((*header)->second);
  }
  std::sort(targets.begin(), targets.end());
  return targets;
}

std::vector<std::string> TargetsWithRefusals(absl::string_view dir,
                                             absl::string_view command) {
  std::vector<std::string> targets = RememberedTargets(dir, command);
  std::erase_if(targets, [&](const std::string& target) {
    const absl::StatusOr<Remembered> r =
        RefusalMemory(dir, command, target).Load();
    return r.ok() && r->variants.empty() && r->classes.empty();
  });
  return targets;
}

absl::StatusOr<Remembered> RefusalMemory::Load() const {
  Remembered remembered;
  if (access(path_.c_str(), F_OK) != 0) return remembered;
  absl::StatusOr<std::string> text = ReadRecordFile(path_, kMaxMemoryBytes);
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (std::optional<Forgotten> f = ParseForgotten(line)) {
      ApplyForgotten(*f, remembered);
      continue;
    }
    if (auto kept = ParseKept(line)) {
      remembered.kept[kept->first] = std::move(kept->second);
      continue;
    }
    AddClass(line, remembered.classes);
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::MaxSplits('\t', 2));
    if (fields.size() != 3 ||
        (fields[0] != kRegisters && fields[0] != kImmediates)) {
      continue;
    }
    const absl::StatusOr<Variant> v = ParseVariant(fields[1]);
    if (!v.ok()) continue;
    remembered.variants.try_emplace(RefusalKey{*v, fields[0] == kImmediates},
                                    std::string(fields[2]));
  }
  return remembered;
}

std::vector<Forgotten> ForgottenSince(absl::string_view dir,
                                      absl::string_view command,
                                      int64_t since_unix_seconds) {
  std::vector<Forgotten> forgotten;
  for (const std::string& target : RememberedTargets(dir, command)) {
    const absl::StatusOr<Remembered> remembered =
        RefusalMemory(dir, command, target).Load();
    if (!remembered.ok()) continue;
    for (const Forgotten& f : remembered->forgotten) {
      if (f.unix_seconds >= since_unix_seconds) forgotten.push_back(f);
    }
  }
  return forgotten;
}

std::vector<RefusalClass> RememberedClasses(absl::string_view dir,
                                            absl::string_view command) {
  std::vector<RefusalClass> classes;
  for (const std::string& target : RememberedTargets(dir, command)) {
    const absl::StatusOr<Remembered> remembered =
        RefusalMemory(dir, command, target).Load();
    if (!remembered.ok()) continue;
    for (const RefusalClass& c : remembered->classes) classes.push_back(c);
  }
  return classes;
}

std::vector<RememberedTool> RememberedTools(
    absl::string_view dir, std::vector<std::string>* unreadable) {
  std::vector<RememberedTool> tools;
  const auto damaged = [&](const absl::Status& why) {
    if (unreadable != nullptr) unreadable->emplace_back(why.message());
  };
  for (const std::string& path : FilesIn(std::string(dir), ".tsv")) {
    auto header = HeaderOf(path);
    if (!header.ok()) damaged(header.status());
    // A memory's name, without its header (bytes written over its start):
    // damage, not a file of someone else's (the twelfth fault run: a report
    // showed no refusals, and no damage).
    if (header.ok() && !*header &&
        absl::StartsWith(path.substr(path.rfind('/') + 1), "ptx-cmd-")) {
      damaged(absl::InvalidArgumentError(absl::StrCat(
          path,
          ": its first line is no refusal memory's header: damaged, not "
          "read")));
    }
    if (!header.ok() || !*header) continue;
    RememberedTool tool{.command = std::move((*header)->first),
                        .target = std::move((*header)->second)};
    const RefusalMemory memory(dir, tool.command, tool.target);
    if (memory.path() != path) continue;  // not the file its header names
    absl::StatusOr<Remembered> remembered = memory.Load();
    if (!remembered.ok()) damaged(remembered.status());
    if (!remembered.ok()) continue;
    tool.remembered = *std::move(remembered);
    tools.push_back(std::move(tool));
  }
  std::sort(tools.begin(), tools.end(), [](const auto& a, const auto& b) {
    return std::tie(a.command, a.target) < std::tie(b.command, b.target);
  });
  return tools;
}

std::string ShortMessage(absl::string_view message) {
  constexpr size_t kShown = 300;
  if (message.size() <= kShown) return std::string(message);
  return absl::StrCat(message.substr(0, kShown), "… (", message.size() - kShown,
                      " more bytes)");
}

absl::Status MakeRefusalsDir(const std::string& dir) {
  PTXDIFF_RETURN_IF_ERROR(MakeDirs(dir));
  for (const std::string& path : FilesIn(dir, ".tsv")) {
    struct stat st;
    std::string what;
    if (stat(path.c_str(), &st) != 0) {
      // A link to nothing is never written through (the seventeenth fault
      // run: its refusals said "remembered in" it all the same).
      if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        what = "a link to nothing";
    } else if (!S_ISREG(st.st_mode)) {
      what = S_ISDIR(st.st_mode)    ? "a directory"
             : S_ISFIFO(st.st_mode) ? "a FIFO"
                                    : "a device or socket";
    }
    if (!what.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " is ", what,
                       ", not a file of remembered refusals: remove it"));
    }
  }
  return absl::OkStatus();
}

absl::Status RefusalMemory::Append(absl::string_view line) const {
  if (access(path_.c_str(), F_OK) != 0) {
    if (absl::Status made = MakeDirs(dir_); !made.ok()) return made;
    if (absl::Status wrote = AppendToFile(path_, header_); !wrote.ok())
      return wrote;
  }
  return AppendToFile(path_, line);
}

absl::Status RefusalMemory::RememberClass(const RefusalClass& c) const {
  return Append(absl::StrCat(kClass, "\t", ClassFields(c), "\n"));
}

absl::Status RefusalMemory::ForgetClass(const RefusalClass& c) const {
  return Append(absl::StrCat(kDropped, "\t", ClassFields(c), "\n"));
}

absl::Status RefusalMemory::Forget(const Forgotten& f) const {
  return Append(absl::StrCat(kForgotten, "\t", f.unix_seconds, "\t", f.variants,
                             "\t", f.classes, "\t", OneLine(f.message), "\n"));
}

absl::Status RefusalMemory::NoteKept(absl::string_view message,
                                     const Kept& when) const {
  return Append(absl::StrCat(kKept, "\t", when.unix_seconds, "\t",
                             OneLine(when.run), "\t", OneLine(message), "\n"));
}

absl::Status RefusalMemory::Remember(const RefusalKey& key,
                                     absl::string_view why) const {
  return Append(
                     absl::StrCat(key.second ? kImmediates : kRegisters, "\t",
                                  Spell(key.first), "\t", OneLine(why), "\n"));
}

}  // namespace ptxdiff
