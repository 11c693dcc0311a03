/*
 * register_props: the invariant of examples/c/register.c as a C predicate
 * over `struct cmc_view` (cmc.h), for a model file's `properties` shared
 * object: cc -shared -fPIC -I. examples/c/register_props.c -o register_props.so
 *
 * A node's state is the 5 bytes register.c reports on fd 3: {phase,
 * counter, writer, asking, acks}; an acknowledgement in the ghost log is
 * {'A', counter, writer}. A node that is down (crashed, not restarted
 * yet: CMC_DOWN) holds what its durable record says, {counter, writer},
 * which its next life recovers; a live node whose report is not 5 bytes
 * long breaks the property: the checker cannot read it.
 */
#include "cmc.h"

#include <stdint.h>

/* Every write acknowledged in the ghost log is held (its timestamp or a
 * newer one) by a majority of the nodes. */
int acked_writes_survive(const struct cmc_view *v)
{
    for (uint32_t n = 0; n < v->nodes; n++)
        if (v->node[n].life != CMC_DOWN && v->node[n].state.len != 5)
            return 0;
    for (uint32_t i = 0; i < v->replies; i++) {
        const struct cmc_reply *r = &v->reply[i];
        if (r->len != 3 || r->bytes[0] != 'A')
            continue;
        uint32_t holders = 0;
        for (uint32_t n = 0; n < v->nodes; n++) {
            /* {counter, writer}: the report's bytes 1 and 2, or, down, the
             * durable record (nothing durable: nothing held). */
            const struct cmc_node_view *m = &v->node[n];
            const uint8_t *s = m->life == CMC_DOWN ? m->durable.bytes : m->state.bytes + 1;
            if (m->life == CMC_DOWN && (!m->has_durable || m->durable.len != 2))
                continue;
            if (s[0] > r->bytes[1] || (s[0] == r->bytes[1] && s[1] >= r->bytes[2]))
                holders++;
        }
        if (holders < v->nodes / 2 + 1)
            return 0;
    }
    return 1;
}
