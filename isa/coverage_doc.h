// docs/isa-coverage.md, generated from the instruction table.
//
// The document is checked in; coverage_doc_test fails when it differs from
// what RenderIsaCoverage() gives, and the `update_isa_coverage` build target
// rewrites it.

#ifndef PTXDIFF_ISA_COVERAGE_DOC_H_
#define PTXDIFF_ISA_COVERAGE_DOC_H_

#include <string>

namespace ptxdiff {

// The whole Markdown document.
std::string RenderIsaCoverage();

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_COVERAGE_DOC_H_
