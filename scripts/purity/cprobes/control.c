/* The control: a clean probe core. The purity gate must pass it, or its
 * rejections of the other probes prove nothing. */
#include "probe.h"

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    uint8_t next = (uint8_t)((ctx->node + 1) % ctx->nodes);
    switch (ev->kind) {
    case CMC_EV_CLIENT:
        s->count++;
        cmc_send(out, next, &s->count, 1);
        cmc_arm(out, 0);
        break;
    case CMC_EV_DELIVER:
        if (ev->deliver.len >= 1)
            s->last = ev->deliver.msg[0];
        s->count++;
        cmc_reply(out, &s->last, 1);
        break;
    case CMC_EV_FIRE:
        cmc_cancel(out, 0);
        break;
    default:
        break;
    }
}

PROBE_CORE("purity-control");
