// Which instruction variants ptxas folds to constants, per family and arch:
// the backend's `supports` and its decision to decline a variant or a tuple
// before it costs a compile. Every entry is a measurement of ptxas 13.0,
// cited by its section of docs/ptxas-folding-research.md.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_FOLDABILITY_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_FOLDABILITY_H_

#include <vector>

#include "isa/axes.h"
#include "isa/tuple.h"
#include "isa/variant.h"

namespace ptxdiff {

// ptxas folds family `f` for at least some operands on an arch with this SM.
bool Foldable(Family f, int sm);

// The variants of foldable families that ptxas folds for no operands on any
// arch: declined as unsupported (the backend option all_variants=1 compiles
// them anyway, to check this list against another ptxas).
bool NeverFolded(const Variant& v);

// False for a SIMD video tuple whose selector is not the default: ptxas folds
// those only with the default selectors.
bool FoldsForSelector(const Variant& v, const Operands& o);

// The families ptxas folds for at least some operands on an arch with this
// SM number (the backend's `supports`).
std::vector<Family> FoldableFamilies(int sm);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_FOLDABILITY_H_
