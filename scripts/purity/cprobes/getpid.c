/* A call to the C library: the process id, different on every run.
 * Expected: [call] getpid. */
#include "probe.h"

#include <unistd.h>

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    if (ev->kind == CMC_EV_CLIENT) {
        s->count = (uint8_t)getpid();
        cmc_reply(out, &s->count, 1);
    }
}

PROBE_CORE("purity-getpid");
