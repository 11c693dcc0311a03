/*
 * election_props: the invariants of examples/c/election.c as C predicates
 * over `struct cmc_view` (cmc.h), for a model file's `properties` shared
 * object: cc -shared -fPIC -I. examples/c/election_props.c -o election_props.so
 *
 * A node's state is the 7 bytes election.c reports on fd 3: {phase, term,
 * voted, role, leader, votes, asking}. A node that is down (crashed, not
 * restarted yet: CMC_DOWN) has no state, and is neither a leader nor a
 * believer; a live node whose report is not 7 bytes long breaks every
 * property: the checker cannot read it.
 */
#include "cmc.h"

#include <stdint.h>

#define NONE 0xff
#define LEADER 2

struct elector {
    uint8_t phase, term, voted, role, leader, votes, asking;
};

static int decode(const struct cmc_view *v, uint32_t n, struct elector *e)
{
    const struct cmc_record *r = &v->node[n].state;
    if (v->node[n].life == CMC_DOWN) {
        /* No state: a follower of no one, in no term. */
        *e = (struct elector){0, 0, NONE, 0, NONE, 0, 0};
        return 1;
    }
    if (r->len != 7)
        return 0;
    e->phase = r->bytes[0];
    e->term = r->bytes[1];
    e->voted = r->bytes[2];
    e->role = r->bytes[3];
    e->leader = r->bytes[4];
    e->votes = r->bytes[5];
    e->asking = r->bytes[6];
    return 1;
}

/* No two nodes are leaders of the same term. */
int one_leader_per_term(const struct cmc_view *v)
{
    struct elector a, b;
    for (uint32_t i = 0; i < v->nodes; i++) {
        if (!decode(v, i, &a))
            return 0;
        for (uint32_t j = i + 1; j < v->nodes; j++) {
            if (!decode(v, j, &b))
                return 0;
            if (a.role == LEADER && b.role == LEADER && a.term == b.term)
                return 0;
        }
    }
    return 1;
}

/* No two nodes of the same term believe in different leaders. */
int one_belief_per_term(const struct cmc_view *v)
{
    struct elector a, b;
    for (uint32_t i = 0; i < v->nodes; i++) {
        if (!decode(v, i, &a))
            return 0;
        for (uint32_t j = i + 1; j < v->nodes; j++) {
            if (!decode(v, j, &b))
                return 0;
            if (a.term == b.term && a.leader != NONE && b.leader != NONE && a.leader != b.leader)
                return 0;
        }
    }
    return 1;
}
