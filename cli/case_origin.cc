#include "cli/case_origin.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/commands.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "triage/text_case.h"
#include "triage/triage_store.h"

namespace ptxdiff {

// An entry's file that is a FIFO (or a socket) would block its read for
// ever: damage, as `triage list` says, never opened.
absl::Status RefuseEntryFifo(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 &&
      (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     " is a FIFO, not a file: the entry is damaged "
                     "(`ptxdiff triage list` says how); not read"));
  }
  return absl::OkStatus();
}

// The directory of the triage entry whose case.txt `case_path` is, if it
// is one: a meta.txt beside it, or an entry's name (its meta.txt lost: the
// seventeenth fault run saw it replayed on the default backend, unsaid).
std::optional<std::string> EntryDirOf(const std::string& case_path) {
  if (!absl::EndsWith(case_path, "/case.txt")) return std::nullopt;
  const std::string dir = case_path.substr(0, case_path.size() - 9);
  struct stat st;
  if (lstat((dir + "/meta.txt").c_str(), &st) == 0 ||
      ParseEntryName(dir.substr(dir.rfind('/') + 1)).ok())
    return dir;
  return std::nullopt;
}

// The --backend (and --arch) that replay a tuple entry where it was found,
// from its meta.txt's backend line (WorkerIdentity::Describe, "ptx-cmd 1
// (my-tool {ptx} {in} {out})"); an error saying why not for a worker the
// entry cannot start again (an exec: worker's path is not recorded).
absl::StatusOr<std::vector<std::string>> EntryBackendFlags(
    const std::string& entry_dir) {
  const std::string meta_path = entry_dir + "/meta.txt";
  PTXDIFF_RETURN_IF_ERROR(RefuseEntryFifo(meta_path));
  // Read as a record: no device (a link to /dev/zero), said as damage.
  const absl::StatusOr<std::string> read =
      ReadRecordFile(meta_path, kMaxCaseFileBytes);
  if (absl::IsNotFound(read.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat(meta_path,
                     " is missing: the entry does not say which backend it was "
                     "found on; pass --backend to replay it"));
  }
  if (!read.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the entry's meta.txt is damaged: ", read.status().message(),
        "; pass --backend to replay it"));
  }
  const std::string& meta = *read;
  std::string identity;
  for (absl::string_view line : absl::StrSplit(meta, '\n')) {
    if (absl::ConsumePrefix(&line, "backend: ")) identity = std::string(line);
  }
  if (identity.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        meta_path,
        " is damaged: it names no backend (ptxdiff triage show "
        "says what it holds); pass --backend to replay the entry"));
  }
  const std::string name = identity.substr(0, identity.find(' '));
  if (name == "oracle" || name == "cuda")
    return std::vector<std::string>{"--backend", name};
  if (name == "ptxas") {
    std::vector<std::string> flags = {"--backend", "ptxas"};
    const size_t sm = identity.rfind("sm_");
    if (sm != std::string::npos) {
      flags.push_back("--arch");
      flags.push_back(identity.substr(
          sm, identity.find_first_not_of("sm_0123456789", sm) - sm));
    }
    return flags;
  }
  // What the program lane files on a tool: "ptx-cmd sm_90: COMMAND".
  if (const size_t colon = identity.find(": ");
      name == "ptx-cmd" && colon != std::string::npos &&
      absl::StartsWith(identity, "ptx-cmd sm_") &&
      identity.find_first_of(" :", 8) == colon) {
    return std::vector<std::string>{
        "--backend", absl::StrCat("ptx-cmd:", identity.substr(colon + 2)),
        "--arch", identity.substr(8, colon - 8)};
  }
  const size_t open = identity.find(" (");
  if (name == "ptx-cmd" && open != std::string::npos &&
      absl::EndsWith(identity, ")")) {
    // "(COMMAND)", or "(COMMAND, PTX for sm_90)" where the worker names the
    // target it writes PTX for: that is --arch, not part of the command.
    constexpr absl::string_view kTarget = ", PTX for ";
    std::string command = identity.substr(open + 2, identity.size() - open - 3);
    std::vector<std::string> flags;
    const size_t target = command.rfind(absl::StrCat(kTarget, "sm_"));
    if (target != std::string::npos) {
      flags = {"--arch", command.substr(target + kTarget.size())};
      command.resize(target);
    }
    flags.insert(flags.begin(),
                 {"--backend", absl::StrCat("ptx-cmd:", command)});
    return flags;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      entry_dir, " was found on ", identity,
      ", which it does not record how to start (an exec: worker's path): "
      "pass --backend to replay it"));
}

// What `repro` or `minimize` says of a crash file's backend: crash mode records
// where each crash was found (FindCrashOrigin); libFuzzer's file alone does not
// say.
std::string CrashOriginNote(absl::string_view command,
                            const std::optional<CrashOrigin>& origin,
                            const std::string& not_read, const ParsedArgs& args,
                            const WorkerClient& client,
                            const std::string& dir) {
  if (origin && !args.Has("backend")) {
    return absl::StrCat(command, ": found as `", origin->signature, "` on ",
                        origin->backend, " (", dir, "/", kCrashOriginsFile,
                        "): replaying it there\n");
  }
  if (origin && args.Get("backend") != origin->backend) {
    return absl::StrCat(command, ": found as `", origin->signature, "` on ",
                        origin->backend, ", not on ", args.Get("backend"),
                        "\n");
  }
  // A damaged record is said as what it is (the fifteenth fault run: "which
  // the file does not record").
  if (!origin && !not_read.empty() && !args.Has("backend")) {
    return absl::StrCat(command, ": replaying on ",
                        client.identity().Describe(),
                        ", the default backend: the record of the backend "
                        "each crash was found on cannot be read (",
                        not_read, "); pass --backend\n");
  }
  if (!origin && !args.Has("backend")) {
    return absl::StrCat(command, ": replaying on ",
                        client.identity().Describe(),
                        ", the default backend: the crash was found on the "
                        "backend its fuzzer ran against, "
                        "which the file does not record (nor ",
                        dir, "/", kCrashOriginsFile,
                        "); pass --backend (the fuzzer's log names it: "
                        "`ptxdiff: <kind> <backend> <variant> "
                        "<class>`)\n");
  }
  return "";
}

absl::StatusOr<TupleCaseOrigin> WhereTupleCaseWasFound(
    absl::string_view command, const ParsedArgs& parsed,
    const std::string& path, const std::string& raw, std::ostream& out) {
  TupleCaseOrigin o{.args = parsed};
  if (const std::optional<std::string> entry = EntryDirOf(path);
      entry && !parsed.Has("backend")) {
    // A triage entry runs on the backend it was found on.
    PTXDIFF_ASSIGN_OR_RETURN(const std::vector<std::string> flags,
                             EntryBackendFlags(*entry));
    for (size_t k = 0; k + 1 < flags.size(); k += 2) {
      const std::string key = flags[k].substr(2);
      if (!parsed.Has(key)) o.args.flags[key] = {flags[k + 1]};
    }
    out << command << ": replaying on the backend it was found on: "
        << absl::StrJoin(flags, " ") << "\n";
  }
  // A crash file runs on the backend it was found on, where recorded.
  const size_t slash = path.rfind('/');
  o.dir = slash == std::string::npos ? "." : path.substr(0, slash);
  o.crash_file = !LooksLikeTextCase(raw);
  if (o.crash_file) o.origin = FindCrashOrigin(o.dir, raw, &o.origins_not_read);
  if (o.origin && !parsed.Has("backend"))
    o.args.flags["backend"] = {o.origin->backend};
  return o;
}

}  // namespace ptxdiff
