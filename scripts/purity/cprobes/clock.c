/* The clock through the C library. Expected: [call] time. */
#include "probe.h"

#include <time.h>

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT)
        s->last = (uint8_t)time(0);
}

PROBE_CORE("purity-clock");
