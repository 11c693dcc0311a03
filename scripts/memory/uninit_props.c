/*
 * uninit_props: the invariant probe of the memory gate
 * (scripts/memory_teeth.sh). `reads_uninit` branches on a local it never
 * wrote, but only for views of three nodes whose first node reports two
 * bytes or more, so the driver must reach that shape to be caught.
 * `clean` is the control.
 */
#include "cmc.h"

__attribute__((noinline)) static int odd(const volatile uint8_t *p)
{
    return p[1] & 1;
}

int reads_uninit(const struct cmc_view *v)
{
    uint8_t seen[4];
    seen[0] = v->node[0].state.len;
    if (v->nodes == 3 && v->node[0].state.len >= 2 && odd(seen))
        return 0;
    return 1;
}

int clean(const struct cmc_view *v)
{
    return v->nodes >= 1;
}
