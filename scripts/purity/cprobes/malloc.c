/* Allocation: a call, and an address that differs from run to run. The
 * address is sent, so that no compiler can elide the allocation.
 * Expected: [call] malloc (and free). */
#include "probe.h"

#include <stdlib.h>

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    if (ev->kind == CMC_EV_CLIENT) {
        uint8_t *scratch = malloc(CMC_PAYLOAD_MAX);
        if (!scratch)
            return;
        scratch[0] = s->count;
        cmc_send(out, 0, &scratch, sizeof scratch);
        free(scratch);
    }
}

PROBE_CORE("purity-malloc");
