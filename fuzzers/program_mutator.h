// The structure-aware mutator and crossover of the program fuzzer.
//
// Inputs are program_encoding.h's byte form. A mutation works on its
// records, where a source is "the k-th most recent register that fits", so
// that every result decodes to a program: it sets an immediate or a witness
// to an edge value of its width (edge_operands.h) or flips its bits, makes
// a source a register or an immediate, changes a step's variant along its
// family (or to another family), adds, copies, drops or swaps steps, wraps
// steps in a counted loop (or changes a trip count) or in an if/else,
// adds a forward branch over steps, a bare label or an exit (or changes a
// branch's label or a jump's guard), guards a step or sets its destination
// again, changes the outputs, adds or
// drops an input, or makes an input the thread's own (%tid.x, %laneid: only
// where the shape says the backend judges them) or a parameter again, or
// changes a thread input's lane.
// Everything is drawn from a PRNG seeded with libFuzzer's seed, so a run
// replays. An input that does not decode is replaced by a fresh program in
// the generator's shapes (program_generator.h).

#ifndef PTXDIFF_FUZZERS_PROGRAM_MUTATOR_H_
#define PTXDIFF_FUZZERS_PROGRAM_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "program/program_encoding.h"
#include "program/program_generator.h"

namespace ptxdiff {

// Mutates the program input in `data` (of `size` bytes, room for
// `max_size`) and returns the new size.
size_t MutateProgramInput(uint8_t* data, size_t size, size_t max_size,
                          unsigned seed, const ProgramShape& shape = {});

// The inputs and first steps of `a`, the last steps of `b`, and `a`'s
// outputs, written to `out` (room for `max_out`).
size_t CrossOverProgramInputs(const uint8_t* a, size_t a_size, const uint8_t* b,
                              size_t b_size, uint8_t* out, size_t max_out,
                              unsigned seed, const ProgramShape& shape = {});

// The records changed by one to three mutations; a parameter becomes a
// thread input only where `shape.thread_inputs`.
void MutateProgramRecords(ProgramRecords& records, std::mt19937_64& rng,
                          const ProgramShape& shape = {});

// A fresh input: a program of the generator's shapes, in the byte form.
std::string RandomProgramInput(std::mt19937_64& rng, const ProgramShape& shape);

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_PROGRAM_MUTATOR_H_
