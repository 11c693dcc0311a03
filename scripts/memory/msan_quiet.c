/*
 * msan_quiet: the invariant the memory gate adds to every model it runs
 * over a MemorySanitizer build (scripts/memory_gate.sh). It fails in a
 * world where a node has exited with CMC_MSAN_EXITCODE, the exit code
 * msan_options.c gives MemorySanitizer: the node read an uninitialised
 * byte on the path to that world.
 *
 * The checker records a node's exit code in the world and does not treat
 * it as an error by itself, so without this invariant an MSan report
 * would end the node quietly and the search would go on.
 *
 * Compiled (not instrumented: it runs in the checker) into one shared
 * object with the model's own invariants, if it has any.
 */
#include "cmc.h"

#ifndef CMC_MSAN_EXITCODE
#error "build with -DCMC_MSAN_EXITCODE=N"
#endif

int msan_quiet(const struct cmc_view *v)
{
    for (uint32_t n = 0; n < v->nodes; n++)
        if (v->node[n].life == CMC_EXITED && v->node[n].status == CMC_MSAN_EXITCODE)
            return 0;
    return 1;
}
