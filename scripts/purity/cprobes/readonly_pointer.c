/* A writable global reached through a `const` table: the code reads only
 * read-only data, which points to the writable counter. Expected:
 * [writable-data] naming the table and `hidden`. */
#include "probe.h"

static uint8_t hidden[2];
static uint8_t *const slots[2] = {&hidden[0], &hidden[1]};

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT) {
        uint8_t *slot = slots[ctx->node & 1];
        *slot += 1;
        s->count = *slot;
    }
}

PROBE_CORE("purity-readonly-pointer");
