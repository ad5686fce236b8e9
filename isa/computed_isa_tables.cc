// TheIsaTables() of library `isa_computed`: composed from the family table
// on first use. Only the generator of the baked tables links it (see
// isa/isa_tables.h); every other program links the baked ones.

#include "isa/isa_tables.h"

namespace ptxdiff {

const IsaTables& TheIsaTables() {
  static const IsaTables* const tables =
      new IsaTables((new ComputedIsaTables(ComputeIsaTables()))->View());
  return *tables;
}

}  // namespace ptxdiff
