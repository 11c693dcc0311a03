/* A call through a function pointer taken from a message: code the gate
 * cannot see. Expected: [indirect-call]. */
#include "probe.h"

#include <string.h>

typedef uint8_t (*peek)(void);

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_DELIVER && ev->deliver.len == sizeof(peek)) {
        peek f;
        memcpy(&f, ev->deliver.msg, sizeof f);
        s->last = f();
    }
}

PROBE_CORE("purity-indirect-call");
