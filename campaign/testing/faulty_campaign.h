// A campaign against the faulty test worker (faulty_worker.cc: the oracle
// over the protocol, wrong as its flags say), for the campaign's tests: its
// options, what to offer it, and what it filed. For a target with
// ptxdiff_uses_test_workers (PTXDIFF_FAULTY_WORKER_PATH).

#ifndef PTXDIFF_CAMPAIGN_TESTING_FAULTY_CAMPAIGN_H_
#define PTXDIFF_CAMPAIGN_TESTING_FAULTY_CAMPAIGN_H_

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "campaign/campaign.h"
#include "gtest/gtest.h"
#include "harness/semantic_classes.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "triage/triage_store.h"

namespace ptxdiff {

inline std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/campaign_" + name + "_" +
                          std::to_string(getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  return dir;
}

inline CampaignOptions Options(const std::string& dir,
                        std::vector<std::string> faulty_args) {
  CampaignOptions o;
  o.worker.argv = {PTXDIFF_FAULTY_WORKER_PATH};
  for (std::string& a : faulty_args) o.worker.argv.push_back(std::move(a));
  o.triage_dir = dir + "/triage";
  o.systematic = false;
  o.batch_size = 64;
  return o;
}

inline void Offer(Campaign& c, const char* spelling, Operands ops,
           uint8_t runtime = 0) {
  const Tuple t{*ParseVariant(spelling), ops, runtime};
  const Result r = Evaluate(t.variant, t.operands);
  c.Offer(t, r, SemanticClasses(t, r));
}

inline std::vector<std::string> EntryNames(const std::string& triage_dir) {
  std::vector<std::string> names;
  auto store = TriageStore::Open(triage_dir, false);
  if (!store.ok()) return {store.status().ToString()};
  const auto entries = store->List();
  if (!entries.ok()) return {entries.status().ToString()};
  for (const EntryInfo& e : *entries) {
    names.push_back(absl::StrCat(e.name, " x", e.count()));
  }
  return names;
}

// What `triage show` shows of an EntryNames line's entry ("<name> x<count>").
inline absl::StatusOr<std::string> ShowListed(const std::string& triage_dir,
                                       const std::string& listed) {
  auto store = TriageStore::Open(triage_dir, false);
  if (!store.ok()) return store.status();
  return store->Show(listed.substr(0, listed.rfind(' ')));
}

// A campaign of `o` with one sender, offered a batch of add.u32 and div.u32
// (the faulty worker's --fault picks which faults it), flushed and stopped:
// its entries (EntryNames).
inline std::vector<std::string> FileABatchThatFaults(CampaignOptions o) {
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  if (!c.ok()) return {c.status().ToString()};
  Offer(**c, "add.u32", {{1, 2, 0, 0}});
  Offer(**c, "div.u32", {{7, 2, 0, 0}});
  const bool flushed = (*c)->Flush(absl::Seconds(60));
  (*c)->Stop();
  if (!flushed) return {"the campaign did not flush in 60 s"};
  return EntryNames(o.triage_dir);
}


// Options whose first two workers (the senders') are wrong on bfe with a
// position of at least 256, and whose third (the minimizer's, started at the
// first finding) runs `third` instead: a shell command.
inline CampaignOptions WithMinimizerWorker(
    const std::string& dir, const std::string& third,
    const std::string& first_two =
        "--fault=wrong-on=bfe. --when-operand=1:256") {
  std::system(("mkdir -p '" + dir + "/starts'").c_str());  // mkdir is atomic
  CampaignOptions o = Options(dir, {});
  o.worker.argv = {"/bin/sh", "-c",
                   absl::StrCat("for i in 1 2; do mkdir '", dir,
                                "/starts/'$i 2>/dev/null && exec ",
                                PTXDIFF_FAULTY_WORKER_PATH, " ", first_two,
                                "; done; ", third)};
  o.in_flight = 2;
  return o;
}


}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_TESTING_FAULTY_CAMPAIGN_H_
