/*
 * register_props: the invariant of examples/c/register.c as a C predicate
 * over `struct cmc_view` (cmc.h), for a model file's `properties` shared
 * object: cc -shared -fPIC -I. examples/c/register_props.c -o register_props.so
 *
 * A node's state is the 5 bytes register.c reports on fd 3: {phase,
 * counter, writer, asking, acks}; an acknowledgement in the ghost log is
 * {'A', counter, writer}. A node whose report is not 5 bytes long breaks
 * the property: the checker cannot read it.
 */
#include "cmc.h"

#include <stdint.h>

/* Every write acknowledged in the ghost log is held (its timestamp or a
 * newer one) by a majority of the nodes. */
int acked_writes_survive(const struct cmc_view *v)
{
    for (uint32_t n = 0; n < v->nodes; n++)
        if (v->node[n].state.len != 5)
            return 0;
    for (uint32_t i = 0; i < v->replies; i++) {
        const struct cmc_reply *r = &v->reply[i];
        if (r->len != 3 || r->bytes[0] != 'A')
            continue;
        uint32_t holders = 0;
        for (uint32_t n = 0; n < v->nodes; n++) {
            const uint8_t *s = v->node[n].state.bytes;
            if (s[1] > r->bytes[1] || (s[1] == r->bytes[1] && s[2] >= r->bytes[2]))
                holders++;
        }
        if (holders < v->nodes / 2 + 1)
            return 0;
    }
    return 1;
}
