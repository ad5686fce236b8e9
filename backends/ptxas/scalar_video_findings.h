// What ptxas's code for the scalar video instructions (vadd ... vset, PTX
// ISA 9.7.18.1) is known to compute other than the spec, at every -O level,
// each finding only where its evidence applies (docs/sass-evaluator.md,
// "Open -O0 findings"): the variants whose -O0 code shows the pattern, and
// the operands on which that pattern gives another value than the spec's.
// The SASS evaluator's calibration counts a disagreement there apart; any
// other scalar video disagreement fails it (issue 67).

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_SCALAR_VIDEO_FINDINGS_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_SCALAR_VIDEO_FINDINGS_H_

#include <optional>
#include <string>

#include "isa/family_table.h"

namespace ptxdiff {

// vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vmad, vset.
bool IsScalarVideoFamily(Family f);

// The finding that explains a disagreement of `v`'s code at operands `o`,
// or nothing. With `o` null, the first finding whose variant class holds
// `v` (for some operands).
std::optional<std::string> ScalarVideoFinding(const Variant& v,
                                              const Operands* o);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_SCALAR_VIDEO_FINDINGS_H_
