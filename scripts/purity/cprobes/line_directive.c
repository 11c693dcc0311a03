/* Hides a write of the effects buffer behind a line directive that says
 * the lines after it are cmc.h's, whose lines the source rules trust.
 * Expected: [source:line-directive]. */
#include "probe.h"

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    if (ev->kind == CMC_EV_CLIENT && out->n == 0) {
        s->count++;
#line 200 "cmc.h"
        out->o[0].kind = CMC_FX_REPLY;
        out->o[0].len = 0;
        out->n = 1;
    }
}

PROBE_CORE("purity-line-directive");
