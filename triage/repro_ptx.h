// A standalone PTX file that reproduces one tuple with public tools: a kernel
// that puts the operands in registers, runs the instruction, and stores the
// result to the pointer it is given. `ptxas -arch=sm_XX repro.ptx` assembles
// it; run it with any CUDA host program (or see the comment in the file).

#ifndef PTXDIFF_TRIAGE_REPRO_PTX_H_
#define PTXDIFF_TRIAGE_REPRO_PTX_H_

#include <string>

#include "isa/tuple.h"

namespace ptxdiff {

// `sm` is the target (75 for sm_75); raised to the variant's minimum SM.
std::string ReproPtx(const Tuple& tuple, int sm = 75);

}  // namespace ptxdiff

#endif  // PTXDIFF_TRIAGE_REPRO_PTX_H_
