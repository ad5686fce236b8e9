// What a tool refused, remembered across runs (issue 41, item 2): a parser
// that does not know `lop3` refuses it in every campaign, and finding that
// out again costs runs of whole modules each time.
//
// One file per tool identity (its command template and target) in a
// directory beside the campaign's corpus (`ptxdiff fuzz` passes
// <out>/refusals): a header line naming the identity, then a line per
// refusal, `registers|immediates TAB spelling TAB the tool's message` (on
// one line); a class of refusals (refusal_classes.h), `class TAB shape TAB
// family TAB feature TAB sampled TAB message`; a class a re-check disproved,
// the same line with `dropped` first; `forgotten TAB unix-seconds TAB
// variants TAB classes TAB message` drops every refusal above it whose
// message (SaidKey, a class's message) is that one: what the tool accepted
// when re-checked (refusal_recheck.h); `kept TAB unix-seconds TAB run TAB
// message`: a re-check in run `run` (common/run_id.h) found the tool still
// refusing with `message`. Workers of one campaign append to it
// at once; each line is written whole with O_APPEND, and a line repeated is
// read once. A user who changes the tool deletes the file (or the
// directory).

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_MEMORY_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_MEMORY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/ptx_cmd/refusal_classes.h"
#include "isa/variant.h"

namespace ptxdiff {

// A variant in one of the two shapes a tool may refuse: every operand in a
// register (false), or operands as written (true; immediates among them).
using RefusalKey = std::pair<Variant, bool>;
using Refusals = absl::flat_hash_map<RefusalKey, std::string>;

// A message forgotten (a `forgotten` line): when, and what it dropped.
struct Forgotten {
  int64_t unix_seconds = 0;
  int variants = 0, classes = 0;
  std::string message;
};

// A message a re-check kept (a `kept` line): when, and in which run.
struct Kept {
  int64_t unix_seconds = 0;
  std::string run;
};

// What a memory holds: the variants refused, and the classes confirmed
// (those dropped, and those of a message forgotten, since left out); the
// last re-check that kept each message.
struct Remembered {
  Refusals variants;
  std::vector<RefusalClass> classes;
  std::vector<Forgotten> forgotten;
  absl::flat_hash_map<std::string, Kept> kept;
};

// `message` as a summary line shows it: at most 300 bytes, the rest said as
// cut (a hand-made 5 MB message was printed whole: the sixteenth fault run).
std::string ShortMessage(absl::string_view message);

// What the tool said of a remembered refusal of `v` (`why`, as a variant
// line keeps it), as a class's message is kept (RefusalMessage): the key a
// re-check forgets by. A silent refusal's is "(said nothing)".
std::string SaidKey(const Variant& v, absl::string_view why);

// Drops what `remembered` holds with `f`'s message, and notes `f`.
void ApplyForgotten(const Forgotten& f, Remembered& remembered);

class RefusalMemory {
 public:
  // The memory of the tool `command` for PTX `target` ("sm_90") in `dir`.
  RefusalMemory(absl::string_view dir, absl::string_view command,
                absl::string_view target);

  const std::string& path() const { return path_; }

  // Every refusal and class the file holds (none if it does not exist); a
  // line that is not one (a variant or family this build does not know, a
  // damaged line) is skipped.
  absl::StatusOr<Remembered> Load() const;
  // Append a line each.
  absl::Status Remember(const RefusalKey& key, absl::string_view why) const;
  absl::Status RememberClass(const RefusalClass& c) const;
  absl::Status ForgetClass(const RefusalClass& c) const;
  // Drops every refusal and class remembered with message `f.message`.
  absl::Status Forget(const Forgotten& f) const;
  // A re-check in `run` found the tool still refusing with `message`.
  absl::Status NoteKept(absl::string_view message, const Kept& when) const;

 private:
  // Appends a whole line, making the directory and the header as needed.
  absl::Status Append(absl::string_view line) const;

  std::string dir_, path_, header_;
};

// The targets ("sm_90") `dir` remembers refusals of the tool `command`
// for, from the files' header lines: what a campaign on it skips.
std::vector<std::string> RememberedTargets(absl::string_view dir,
                                           absl::string_view command);
// Of them, those whose memory still holds a refusal (a variant or a class;
// one that cannot be read is kept, its damage said where it is loaded):
// what a campaign says it does not send again. A memory whose every message
// a re-check forgot holds none (the eighteenth fault run).
std::vector<std::string> TargetsWithRefusals(absl::string_view dir,
                                             absl::string_view command);

// The messages `dir` forgot of the tool `command` (every target) at or after
// `since`: what a run's summary says it sends again.
std::vector<Forgotten> ForgottenSince(absl::string_view dir,
                                      absl::string_view command,
                                      int64_t since_unix_seconds);

// The classes `dir` remembers the tool `command` refusing, for every target:
// what a campaign's summary lists.
std::vector<RefusalClass> RememberedClasses(absl::string_view dir,
                                            absl::string_view command);

// One tool's file in a refusals directory, as its header names it.
struct RememberedTool {
  std::string command, target;
  Remembered remembered;
};

// Every tool whose refusals `dir` remembers (a file without the header a
// memory writes is skipped), by command then target: what a report lists.
// A file that cannot be read (no regular file, past its bound) is damage:
// left out, and said in `unreadable` when given, a line each.
std::vector<RememberedTool> RememberedTools(
    absl::string_view dir, std::vector<std::string>* unreadable = nullptr);

// Makes the refusals directory `dir` (MakeDirs: a file in its place is
// refused), then FailedPrecondition naming the first memory file there
// that is no regular file (a FIFO, a device or a link to one or to
// nothing, a directory): a worker cannot start on it, which a command says
// before it starts any (the fifteenth fault run: `fuzz` said it on stdout,
// exit 1). A look, no read.
absl::Status MakeRefusalsDir(const std::string& dir);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_MEMORY_H_
