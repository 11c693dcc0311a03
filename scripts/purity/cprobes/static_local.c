/* A function's `static` local: a global by another name (and it is
 * initialised, so it lives in .data). Expected: [writable-data] naming
 * `seen`. */
#include "probe.h"

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    static uint8_t seen = 7;
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_DELIVER) {
        seen ^= ev->deliver.len;
        s->last = seen;
    }
}

PROBE_CORE("purity-static-local");
