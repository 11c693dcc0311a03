/*
 * election: leader election with timeouts, Raft's election in miniature.
 *
 * Protocol. Node i of N (N is the second argument, 3 by default) waits in
 * accept() for messages, one per connection. When its election timer fires
 * (a read returns 'T': the checker's TIMEOUT) and it is not a leader, it
 * becomes a candidate: it increments its term, votes for itself, makes
 * (term, vote) durable on fd 193, and asks its peers for their votes, one
 * at a time, highest node first: it dials the peer, writes a vote request
 * {'V', term, i} and reads the answer on the same connection, {'G', term}
 * (granted) or {'D', term} (denied). A 'T' (its timer fired first) or an EOF
 * (the peer is gone) counts as no vote. With votes from a majority it is
 * the leader of its term; without, it gives up until its next timeout. A
 * leader's timer is its heartbeat timer: each time it fires, the leader
 * tells every peer with a heartbeat {'H', term, i}, one connection each.
 * A node that sees a higher term adopts it, as a follower that has not
 * voted. A node grants a vote request of its term when it has not voted in
 * that term or voted for that candidate, and makes the vote durable (fd
 * 193) before it answers. A heartbeat of its term or newer makes it a
 * follower of that leader. After a crash a node recovers (term, vote) from
 * fd 193, as a follower that knows no leader.
 *
 * State on fd 3, 7 bytes: {phase, term, voted, role, leader, votes,
 * asking}: where the node is in its code (IDLE in accept, READING the
 * connection it accepted, ASKING a peer for its vote), its term, whom it
 * voted for in that term, its role, the leader it believes in for that
 * term, the votes it holds as a candidate while it campaigns, and the peer
 * it is asking. NONE (0xff) stands for no one. Fields that no longer
 * matter are reset (a failed candidate is a follower that voted for
 * itself), so the encoding is canonical and complete. Durable state on fd
 * 193, 2 bytes: {term, voted}.
 *
 * Properties (examples/c/election_props.c, and the Rust invariants in
 * cmc/tests/process_examples.rs):
 *   one_leader_per_term: no two nodes are leaders of the same term;
 *   one_belief_per_term: no two nodes of the same term believe in
 *     different leaders (which implies the first).
 *
 * Planted bugs:
 *   BUG_VOTE_TWICE: a node grants every vote request of its term, having
 *     forgotten whom it voted for; two candidates of one term each get a
 *     vote from the third node, and both lead. Caught by
 *     one_leader_per_term with two timeouts and no crash.
 *   BUG_VOLATILE_VOTE: a node makes its term durable but not its vote; a
 *     voter that crashes after voting recovers as one that has not voted,
 *     and votes again in the same term. Caught by one_leader_per_term; it
 *     needs a crash (and two timeouts).
 *
 * Built -no-pie by the tests (cmc/tests/process_support): cc -no-pie -I.
 */
#include "cmc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef BUG_VOTE_TWICE
#define BUG_VOTE_TWICE 0
#endif
#ifndef BUG_VOLATILE_VOTE
#define BUG_VOLATILE_VOTE 0
#endif

enum { IDLE = 1, READING = 2, ASKING = 3 };
enum { FOLLOWER = 0, CANDIDATE = 1, LEADER = 2 };
#define NONE 0xff

static struct {
    uint8_t phase, term, voted, role, leader, votes, asking;
} s;
static int me, nodes;

static void report(void)
{
    uint8_t b[7] = {s.phase, s.term, s.voted, s.role, s.leader, s.votes, s.asking};
    cmc_record_write(CMC_STATE_FD, b, sizeof b);
}

static void persist(void)
{
    uint8_t d[2] = {s.term, s.voted};
#if BUG_VOLATILE_VOTE
    d[1] = NONE; /* the vote stays in memory */
#endif
    cmc_record_write(CMC_DURABLE_FD, d, sizeof d);
}

static void follow(uint8_t term)
{
    if (term != s.term) {
        s.term = term;
        s.voted = NONE;
        s.leader = NONE;
    }
    s.role = FOLLOWER;
    s.votes = 0;
}

/* The leader's timer fired: a heartbeat to every peer. */
static void heartbeat(void)
{
    uint8_t hb[3] = {'H', s.term, (uint8_t)me};
    for (int p = 0; p < nodes; p++) {
        if (p == me)
            continue;
        int c = cmc_dial(p);
        if (c >= 0) {
            write(c, hb, sizeof hb);
            close(c);
        }
    }
}

/* The election timer fired: campaign for the next term. */
static void campaign(void)
{
    s.term++;
    s.voted = (uint8_t)me;
    s.role = CANDIDATE;
    s.leader = NONE;
    s.votes = 1;
    persist();
    int majority = nodes / 2 + 1;
    for (int p = nodes - 1; p >= 0 && s.role == CANDIDATE && s.votes < majority; p--) {
        if (p == me)
            continue;
        s.phase = ASKING;
        s.asking = (uint8_t)p;
        report();
        int c = cmc_dial(p);
        if (c < 0)
            continue;
        uint8_t rv[3] = {'V', s.term, (uint8_t)me}, r[CMC_WRITE_MAX];
        write(c, rv, sizeof rv);
        ssize_t n = read(c, r, sizeof r);
        close(c);
        s.asking = NONE;
        if (n == 2 && r[1] > s.term) {
            follow(r[1]);
            persist();
        } else if (n == 2 && r[0] == 'G' && r[1] == s.term) {
            s.votes++;
        }
        /* 'T', EOF or a denial: no vote from this peer. */
    }
    s.asking = NONE;
    if (s.role == CANDIDATE && s.votes >= majority) {
        s.role = LEADER;
        s.leader = (uint8_t)me;
        s.votes = 0;
    } else if (s.role == CANDIDATE)
        follow(s.term); /* gives up until the next timeout */
}

/* A vote request {'V', term, candidate} on connection c. */
static void on_vote_request(int c, uint8_t term, uint8_t candidate)
{
    uint8_t old = s.term;
    if (term > s.term)
        follow(term);
    int grant = term == s.term && (s.voted == NONE || s.voted == candidate);
#if BUG_VOTE_TWICE
    grant = term == s.term; /* forgets whom it voted for */
#endif
    if (term != old || grant) {
        if (grant)
            s.voted = candidate;
        persist(); /* before the answer leaves */
    }
    uint8_t r[2] = {grant ? 'G' : 'D', s.term};
    write(c, r, sizeof r);
}

/* A heartbeat {'H', term, leader}. */
static void on_heartbeat(uint8_t term, uint8_t leader)
{
    if (term < s.term || leader == me)
        return;
    uint8_t old = s.term;
    follow(term);
    s.leader = leader;
    if (term != old)
        persist();
}

int main(int argc, char **argv)
{
    me = argc > 1 ? atoi(argv[1]) : 0;
    nodes = argc > 2 ? atoi(argv[2]) : 3;
    if (me < 0 || nodes < 1 || nodes > CMC_NODES_MAX || me >= nodes)
        return 1;
    uint8_t rec[CMC_STATE_MAX];
    s.voted = s.leader = s.asking = NONE;
    if (cmc_recover(rec) == 2) {
        s.term = rec[0];
        s.voted = rec[1];
    }
    int l = cmc_listen(me);
    if (l < 0)
        return 2;
    for (;;) {
        s.phase = IDLE;
        report();
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 3;
        s.phase = READING;
        report();
        uint8_t m[CMC_WRITE_MAX];
        ssize_t n = read(c, m, sizeof m);
        if (n == 3 && m[0] == 'V')
            on_vote_request(c, m[1], m[2]);
        else if (n == 3 && m[0] == 'H')
            on_heartbeat(m[1], m[2]);
        close(c);
        if (n == 1 && m[0] == 'T' && s.role == LEADER)
            heartbeat();
        else if (n == 1 && m[0] == 'T')
            campaign();
    }
}
