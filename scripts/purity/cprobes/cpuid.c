/* CPU identification through <cpuid.h>, whose `asm` is in a system header
 * the source rules trust: only the machine code shows it. Expected:
 * [instruction:cpuid], and no [source:asm]. */
#include "probe.h"

#include <cpuid.h>

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    unsigned a = 0, b = 0, c = 0, d = 0;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT && __get_cpuid(1, &a, &b, &c, &d))
        s->last = (uint8_t)(c >> 30);
}

PROBE_CORE("purity-cpuid");
