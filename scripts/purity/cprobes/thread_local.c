/* A thread-local: a global per thread of the checker, different in each.
 * Expected: [thread-local]. */
#include "probe.h"

static _Thread_local uint8_t per_thread;

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT)
        s->count = ++per_thread;
}

PROBE_CORE("purity-thread-local");
