/* A writable global: a count kept outside the state, which the world
 * does not hold. Expected: [writable-data] naming `requests`. */
#include "probe.h"

static unsigned requests;

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT)
        s->count = (uint8_t)++requests;
}

PROBE_CORE("purity-global");
