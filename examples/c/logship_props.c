/*
 * logship_props: the invariant of examples/c/logship.c as a C predicate
 * over `struct cmc_view` (cmc.h), for a model file's `properties` shared
 * object: cc -shared -fPIC -I. examples/c/logship_props.c -o logship_props.so
 *
 * A node's state is what logship.c reports on fd 3: {role, phase,
 * subscribed, length, log...}, 4 + length bytes; node 0 is the primary. A
 * node that is down (CMC_DOWN) has none; a live node whose report is not of
 * that form breaks the property: the checker cannot read it.
 */
#include "cmc.h"

#include <stdint.h>

static const struct cmc_record *log_of(const struct cmc_view *v, uint32_t n)
{
    const struct cmc_record *r = &v->node[n].state;
    if (r->len < 4 || r->len != 4 + r->bytes[3])
        return 0;
    return r;
}

/* Every backup's log is a prefix of the primary's (a node that is down,
 * CMC_DOWN, has no log in memory: nothing to compare). */
int backups_are_prefixes(const struct cmc_view *v)
{
    if (v->node[0].life == CMC_DOWN)
        return 1;
    const struct cmc_record *p = log_of(v, 0);
    if (!p)
        return 0;
    for (uint32_t n = 1; n < v->nodes; n++) {
        if (v->node[n].life == CMC_DOWN)
            continue;
        const struct cmc_record *b = log_of(v, n);
        if (!b || b->bytes[3] > p->bytes[3])
            return 0;
        for (uint32_t i = 0; i < b->bytes[3]; i++)
            if (b->bytes[4 + i] != p->bytes[4 + i])
                return 0;
    }
    return 1;
}
