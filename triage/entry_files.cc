#include "triage/entry_files.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/printable.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "triage/text_case.h"

namespace ptxdiff {
namespace triage_internal {
namespace {

std::vector<std::string> FileNames(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Some of `bytes`, quoted and escaped, for a message about them.
std::string Excerpt(absl::string_view bytes) {
  constexpr size_t kMax = 40;
  return absl::StrCat("\"", absl::CHexEscape(bytes.substr(0, kMax)),
                      bytes.size() > kMax ? "...\"" : "\"");
}

// A damaged file's `text`, its garbage escaped (common/printable.h), ending
// in a newline.
std::string Printable(absl::string_view text) {
  std::string out = PrintableBytes(text);
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

bool IsMetaKey(absl::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// meta.txt, read and checked: the lines that parse, and what is wrong.
struct MetaCheck {
  std::map<std::string, std::string> meta;
  std::vector<std::string> damage;
  // Why there is no count that parses; empty when there is one.
  std::string count_lost;
};

MetaCheck CheckMeta(absl::string_view text) {
  MetaCheck c;
  if (text.empty()) {
    c.damage.push_back(c.count_lost = "meta.txt is empty");
    return c;
  }
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  // FormatMeta ends every line: a last line without its newline was cut
  // short, and its value is not to be trusted.
  const bool cut = !absl::EndsWith(text, "\n");
  if (!cut) lines.pop_back();
  int bad = 0;
  std::string first_bad;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    const size_t colon = line.find(':');
    const absl::string_view key =
        colon == absl::string_view::npos
            ? ""
            : absl::StripAsciiWhitespace(line.substr(0, colon));
    const absl::string_view value =
        colon == absl::string_view::npos
            ? ""
            : absl::StripAsciiWhitespace(line.substr(colon + 1));
    const bool cut_here = cut && i + 1 == lines.size();
    if (cut_here || !IsMetaKey(key) || !IsMetaValue(value)) {
      if (bad++ == 0) {
        first_bad = absl::StrCat("line ", i + 1, cut_here ? ", cut short" : "",
                                 ": ", Excerpt(line));
      }
      continue;
    }
    c.meta[std::string(key)] = std::string(value);
  }
  if (bad > 0) {
    c.damage.push_back(absl::StrCat(
        "meta.txt has ", bad, bad == 1 ? " line that is" : " lines that are",
        " not 'key: value' (", first_bad, ")"));
  }
  const auto count = c.meta.find("count");
  int64_t n = 0;
  if (count == c.meta.end()) {
    c.damage.push_back(c.count_lost = "meta.txt has no count");
  } else if (!absl::SimpleAtoi(count->second, &n) || n < 0) {
    c.damage.push_back(c.count_lost = absl::StrCat("meta.txt's count ",
                                                   Excerpt(count->second),
                                                   " is not a number"));
  }
  return c;
}

bool HasKey(absl::string_view text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line),
                         absl::StrCat(key, ":"))) {
      return true;
    }
  }
  return false;
}

// The tuples a case of a batch says it holds (its `batch:` line:
// FormatTextCase), or 1.
int64_t BatchSize(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "batch:")) continue;
    int64_t n = 0;
    const absl::string_view first = absl::StripLeadingAsciiWhitespace(line);
    return absl::SimpleAtoi(first.substr(0, first.find(' ')), &n) ? n : -1;
  }
  return 1;
}

// What is wrong with a program entry's case.txt: it must read back (`check`
// says, when given: triage cannot parse a program), and end its last line.
std::vector<std::string> CheckProgramCase(const std::string& text,
                                          const ProgramCaseCheck& check) {
  if (const absl::Status parsed = check ? check(text) : absl::OkStatus();
      !parsed.ok()) {
    return {absl::StrCat("case.txt does not parse: ", parsed.message())};
  }
  if (!absl::EndsWith(text, "\n"))
    return {"case.txt is cut short: its last line has no newline"};
  return {};
}

}  // namespace

absl::StatusOr<std::string> ReadEntryFile(const std::string& entry_path,
                                          absl::string_view file) {
  // A FIFO would block the read for ever: the record reader refuses it as
  // damage (InvalidArgument), set aside as a file past its bound is.
  return ReadRecordFile(
      absl::StrCat(entry_path, "/", file),
      file == "meta.txt" ? kMaxMetaBytes : kMaxEntryFileBytes);
}

bool TooLarge(const absl::Status& status) {
  // ReadRecordFile's damage: past the bound, or no regular file.
  return absl::IsInvalidArgument(status);
}

int64_t AddCounts(int64_t count, int64_t n) {
  int64_t sum = 0;
  return __builtin_add_overflow(count, n, &sum)
             ? std::numeric_limits<int64_t>::max()
             : sum;
}

void AddToCount(std::map<std::string, std::string>& meta, int64_t n) {
  int64_t count = 0;
  (void)absl::SimpleAtoi(meta["count"], &count);
  meta["count"] = absl::StrCat(AddCounts(count, n));
}

std::string Now() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                          absl::UTCTimeZone());
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool IsMetaValue(absl::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

std::string FormatMeta(const std::map<std::string, std::string>& meta) {
  std::string out;
  for (const auto& [key, value] : meta)
    absl::StrAppend(&out, key, ": ", value, "\n");
  return out;
}

std::vector<std::string> CheckCase(const absl::StatusOr<std::string>& text,
                                   const Signature& signature,
                                   const ProgramCaseCheck& check_program_case) {
  if (absl::IsNotFound(text.status())) return {"case.txt is missing"};
  if (!text.ok())
    return {absl::StrCat("case.txt cannot be read: ", text.status().message())};
  if (text->empty()) return {"case.txt is empty"};
  if (NamesAProgram(signature))
    return CheckProgramCase(*text, check_program_case);
  const absl::StatusOr<std::vector<Tuple>> tuples = ParseTextCaseTuples(*text);
  if (!tuples.ok())
    return {
        absl::StrCat("case.txt does not parse: ", tuples.status().message())};
  const Tuple* tuple = &tuples->front();
  // FormatTextCase ends every line, and always writes `kind:`.
  std::vector<std::string> damage;
  if (!absl::EndsWith(*text, "\n")) {
    damage.push_back("case.txt is cut short: its last line has no newline");
  } else if (!HasKey(*text, "kind")) {
    damage.push_back("case.txt is cut short: it has no 'kind:' line");
  }
  if (NamesABatch(signature)) {
    if (const int64_t said = BatchSize(*text);
        said != static_cast<int64_t>(tuples->size())) {
      damage.push_back(
          absl::StrCat("case.txt is cut short: its batch: line says ", said,
                       " tuples, it holds ", tuples->size()));
    } else if (const std::string batch = BatchName(*tuples);
               batch != signature.spelling) {
      damage.push_back(absl::StrCat("case.txt holds a batch of ",
                                    tuples->size(), " tuple(s) named ", batch,
                                    ", not the entry's ", signature.spelling));
    }
    return damage;
  }
  const absl::StatusOr<Variant> named = ParseVariant(signature.spelling);
  if (named.ok() && *named != tuple->variant) {
    damage.push_back(absl::StrCat("case.txt is a case of ",
                                  Spell(tuple->variant),
                                  ", not of the entry's ", signature.spelling));
  }
  return damage;
}

absl::StatusOr<std::string> SetAside(const std::string& path,
                                     absl::string_view file,
                                     const absl::StatusOr<std::string>& bytes) {
  const std::string stem = absl::StrCat(
      file, ".damaged-",
      absl::FormatTime("%Y%m%dT%H%M%SZ", absl::Now(), absl::UTCTimeZone()));
  std::string name = stem;
  for (int n = 2; Exists(absl::StrCat(path, "/", name)); ++n)
    name = absl::StrCat(stem, "-", n);
  const std::string to = absl::StrCat(path, "/", name);
  if (bytes.ok()) {
    PTXDIFF_RETURN_IF_ERROR(WriteFileAtomic(to, *bytes));
  } else if (rename(absl::StrCat(path, "/", file).c_str(), to.c_str()) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot set ", path, "/", file, " aside as ", name));
  }
  return name;
}

absl::StatusOr<std::map<std::string, std::string>> MetaForUpdate(
    const std::string& path, std::vector<std::string>& repairs) {
  const absl::StatusOr<std::string> text = ReadEntryFile(path, "meta.txt");
  MetaCheck check;
  if (absl::IsNotFound(text.status())) {
    check.count_lost = "meta.txt was missing";
    repairs.push_back("meta.txt was missing: rebuilt");
  } else if (TooLarge(text.status())) {
    // What the reader said, of meta.txt: past its bound, or no regular file
    // (the fifteenth fault run: a FIFO was said "larger than 1048576 bytes").
    absl::string_view why = text.status().message();
    absl::ConsumePrefix(&why, absl::StrCat(path, "/"));
    absl::ConsumeSuffix(&why, ": not read");
    check.count_lost = std::string(why);
    PTXDIFF_ASSIGN_OR_RETURN(const std::string aside,
                             SetAside(path, "meta.txt", text));
    repairs.push_back(absl::StrCat(check.count_lost, ": kept as ", aside));
  } else if (!text.ok()) {
    return text.status();
  } else {
    check = CheckMeta(*text);
    if (check.damage.empty()) return std::move(check.meta);
    PTXDIFF_ASSIGN_OR_RETURN(const std::string aside,
                             SetAside(path, "meta.txt", text));
    repairs.push_back(
        absl::StrCat(absl::StrJoin(check.damage, "; "), ": kept as ", aside));
  }
  if (!check.count_lost.empty()) {
    check.meta["count"] = "0";
    check.meta["count_lost"] =
        absl::StrCat(Now(), ": ", check.count_lost, "; counted from then on");
  }
  return std::move(check.meta);
}

void NoteRepairs(const std::vector<std::string>& repairs,
                 std::map<std::string, std::string>& meta) {
  if (!repairs.empty())
    meta["repaired"] = absl::StrCat(Now(), ": ", absl::StrJoin(repairs, "; "));
}

EntryInfo InspectEntry(const std::string& path, const std::string& name,
                       const Signature& signature,
                       const ProgramCaseCheck& check_program_case) {
  EntryInfo e{.name = name, .signature = signature};
  const absl::StatusOr<std::string> meta = ReadEntryFile(path, "meta.txt");
  if (meta.ok()) {
    MetaCheck check = CheckMeta(*meta);
    e.meta = std::move(check.meta);
    e.damage = std::move(check.damage);
  } else {
    e.damage.push_back(absl::IsNotFound(meta.status())
                           ? std::string("meta.txt is missing")
                           : absl::StrCat("meta.txt cannot be read: ",
                                          meta.status().message()));
  }
  for (std::string& d : CheckCase(ReadEntryFile(path, "case.txt"), signature,
                                  check_program_case)) {
    e.damage.push_back(std::move(d));
  }
  for (std::string& file : FileNames(path)) {
    if (absl::StrContains(file, ".damaged-"))
      e.kept_aside.push_back(std::move(file));
  }
  return e;
}

std::string ShowEntry(const std::string& path, const EntryInfo& e) {
  std::string out;
  for (const std::string& d : e.damage)
    absl::StrAppend(&out, "# DAMAGED: ", d, "\n");
  // What a damaged file holds is shown, never lost, but not fed to the
  // terminal raw.
  const auto file = [&](const char* name) {
    const absl::StatusOr<std::string> bytes = ReadEntryFile(path, name);
    if (!bytes.ok())
      return absl::StrCat("# ", name, ": ", bytes.status().message(), "\n");
    return e.damage.empty() ? *bytes : Printable(*bytes);
  };
  absl::StrAppend(&out, file("case.txt"), "\n# meta.txt\n", file("meta.txt"));
  if (!e.kept_aside.empty()) {
    absl::StrAppend(&out, "\n# kept aside by repairs: ",
                    absl::StrJoin(e.kept_aside, ", "), "\n");
  }
  absl::StrAppend(&out, "\n# files: ", path, "/\n");
  return out;
}

}  // namespace triage_internal

int64_t EntryInfo::count() const {
  int64_t n = 0;
  auto it = meta.find("count");
  return it != meta.end() && absl::SimpleAtoi(it->second, &n) && n >= 0 ? n : 0;
}

bool EntryInfo::count_known() const {
  int64_t n = 0;
  auto it = meta.find("count");
  return it != meta.end() && absl::SimpleAtoi(it->second, &n) && n >= 0;
}

std::string EntryInfo::CountText() const {
  if (!count_known()) return "?";
  return absl::StrCat(count(), count_is_lower_bound() ? "+" : "");
}

std::string EntryInfo::Gist() const {
  const auto how = meta.find("how");
  const auto cause = meta.find("cause");
  const auto found_as = meta.find("found_as");
  const int64_t variants =
      found_as == meta.end() ? 0 : 1 + absl::c_count(found_as->second, ',');
  return absl::StrCat(
      how != meta.end()     ? ": " + how->second
      : cause != meta.end() ? ": " + cause->second
                            : "",
      variants > 1 ? absl::StrCat(" (found in ", variants, " variants)") : "");
}

}  // namespace ptxdiff
