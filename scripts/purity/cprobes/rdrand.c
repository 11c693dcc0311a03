/* Hardware randomness through a compiler builtin (the function is
 * compiled for a CPU with RDRAND). Expected: [instruction:rdrand]. */
#include "probe.h"

__attribute__((target("rdrnd"))) static void probe_step(const struct cmc_ctx *ctx, void *state,
                                                         const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    unsigned value = 0;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT && __builtin_ia32_rdrand32_step(&value))
        s->last = (uint8_t)value;
}

PROBE_CORE("purity-rdrand");
