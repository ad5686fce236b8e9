// Where a case was found, so that `repro` and `minimize` run it there: the
// backend a triage entry's meta.txt names, or the one crash mode recorded
// for a crash file in crash-backends.txt beside it (fuzzers/fuzz_config.h).

#ifndef PTXDIFF_CLI_CASE_ORIGIN_H_
#define PTXDIFF_CLI_CASE_ORIGIN_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/flags.h"
#include "client/worker_client.h"
#include "fuzzers/fuzz_config.h"

namespace ptxdiff {

// An entry's file that is a FIFO (or a socket) would block its read for
// ever: damage, as `triage list` says, never opened.
absl::Status RefuseEntryFifo(const std::string& path);

// The directory of the triage entry whose case.txt `case_path` is, if it
// is one: a meta.txt beside it, or an entry's name (its meta.txt lost: the
// seventeenth fault run saw it replayed on the default backend, unsaid).
std::optional<std::string> EntryDirOf(const std::string& case_path);

// The --backend (and --arch) that replay a tuple entry where it was found,
// from its meta.txt's backend line; an error saying why not.
absl::StatusOr<std::vector<std::string>> EntryBackendFlags(
    const std::string& entry_dir);

// What `command` says of a crash file's backend once `client` runs it.
std::string CrashOriginNote(absl::string_view command,
                            const std::optional<CrashOrigin>& origin,
                            const std::string& not_read, const ParsedArgs& args,
                            const WorkerClient& client, const std::string& dir);

// A tuple case's flags with the backend it was found on where --backend is
// not given: an entry's (said on `out` as `command`'s line), or a crash
// file's recorded one. `crash_file`, `origin`, `origins_not_read` and `dir`
// are for CrashOriginNote once the backend runs.
struct TupleCaseOrigin {
  ParsedArgs args;
  bool crash_file = false;
  std::optional<CrashOrigin> origin;
  std::string origins_not_read;
  std::string dir;  // the case file's
};
absl::StatusOr<TupleCaseOrigin> WhereTupleCaseWasFound(
    absl::string_view command, const ParsedArgs& parsed,
    const std::string& path, const std::string& raw, std::ostream& out);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_CASE_ORIGIN_H_
