/* Writes the effects buffer itself instead of calling cmc_send(): in the
 * machine code this is what cmc_send() compiles to, so only the source
 * rules can tell it. Expected: [source:effects]. */
#include "probe.h"

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    if (ev->kind == CMC_EV_CLIENT && out->n < CMC_EFFECTS_MAX) {
        s->count++;
        out->o[out->n].kind = CMC_FX_SEND;
        out->o[out->n].arg = 0;
        out->o[out->n].len = 1;
        out->o[out->n].bytes[0] = s->count;
        out->n++;
    }
}

PROBE_CORE("purity-effects-write");
