/*
 * register: a replicated register with client writes and durable state,
 * majority-acknowledged, in the manner of ABD's write phase.
 *
 * Protocol. Each of N nodes (N is the second argument, 3 by default) holds
 * the register's version: a timestamp (counter, writer node), ordered by
 * counter, then writer. A client writes by connecting to any node and
 * sending {'W'} (the model's request bytes). That node coordinates the
 * write: it picks the timestamp (its counter + 1, itself), stores it and
 * makes it durable (fd 193), then replicates it to its peers one at a time,
 * highest node first: it dials the peer, writes {'S', counter, writer} and
 * reads the answer {'A'} on the same connection. A 'T' (its timer fired) or
 * an EOF (the peer is gone) counts as no answer. Once a majority (itself
 * included) holds the write, it acknowledges it to the client with {'A',
 * counter, writer}; if it ran out of peers first, it answers {'F', counter,
 * writer} (failed, which promises nothing). A node asked to store a newer
 * timestamp than its own stores it, makes it durable, then answers 'A'; an
 * older or equal one it only acknowledges, since it holds something at
 * least as new. After a crash a node recovers its timestamp from fd 193.
 * A coordinator waiting for a peer serves nobody, so two coordinators that
 * ask each other wait until a TIMEOUT moves one of them on.
 *
 * State on fd 3, 5 bytes: {phase, counter, writer, asking, acks}: where the
 * node is in its code (IDLE in accept, READING the connection it accepted,
 * ASKING a peer to store its write), its timestamp (while it coordinates,
 * the write it replicates: nothing can change it meanwhile), the peer it
 * asks (NONE, 0xff, otherwise) and the copies it knows of (0 when it does
 * not coordinate). Durable state on fd 193, 2 bytes: {counter, writer}.
 *
 * Property (examples/c/register_props.c, and the Rust invariant in
 * cmc/tests/process_examples.rs):
 *   acked_writes_survive: every write acknowledged in the ghost log is
 *     held (its timestamp or a newer one) by a majority of the nodes, as
 *     they stand after every crash so far; so any majority a later read
 *     asks includes a node that has it.
 *
 * Planted bugs:
 *   BUG_UNSYNCED_STORE: a replica stores a replicated write in memory and
 *     acknowledges it without making it durable; when it crashes it
 *     recovers an older timestamp, and the acknowledged write is left on
 *     fewer than a majority. Caught by acked_writes_survive; it needs a
 *     crash.
 *   BUG_EARLY_ACK: the coordinator acknowledges the client as soon as it
 *     holds the write itself, before any replica does. Caught by
 *     acked_writes_survive without any crash.
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

#ifndef BUG_UNSYNCED_STORE
#define BUG_UNSYNCED_STORE 0
#endif
#ifndef BUG_EARLY_ACK
#define BUG_EARLY_ACK 0
#endif

enum { IDLE = 1, READING = 2, ASKING = 3 };
#define NONE 0xff

static struct {
    uint8_t phase, counter, writer, asking, acks;
} s;
static int me, nodes;

static void report(void)
{
    uint8_t b[5] = {s.phase, s.counter, s.writer, s.asking, s.acks};
    cmc_record_write(CMC_STATE_FD, b, sizeof b);
}

static void persist(void)
{
    uint8_t d[2] = {s.counter, s.writer};
    cmc_record_write(CMC_DURABLE_FD, d, sizeof d);
}

/* A client's write on connection `client`: store, replicate, answer. */
static void coordinate(int client)
{
    s.counter++;
    s.writer = (uint8_t)me;
    persist();
    s.acks = 1;
    int majority = nodes / 2 + 1;
#if BUG_EARLY_ACK
    uint8_t early[3] = {'A', s.counter, s.writer};
    write(client, early, sizeof early); /* before any replica has it */
    client = -1;
#endif
    for (int p = nodes - 1; p >= 0 && s.acks < majority; p--) {
        if (p == me)
            continue;
        s.phase = ASKING;
        s.asking = (uint8_t)p;
        report();
        int c = cmc_dial(p);
        if (c < 0)
            continue;
        uint8_t m[3] = {'S', s.counter, s.writer}, r[CMC_WRITE_MAX];
        write(c, m, sizeof m);
        ssize_t n = read(c, r, sizeof r);
        close(c);
        if (n == 1 && r[0] == 'A')
            s.acks++;
    }
    uint8_t answer[3] = {s.acks >= majority ? 'A' : 'F', s.counter, s.writer};
    if (client >= 0)
        write(client, answer, sizeof answer);
    s.asking = NONE;
    s.acks = 0;
}

/* A peer's {'S', counter, writer} on connection c. */
static void on_store(int c, uint8_t counter, uint8_t writer)
{
    if (counter > s.counter || (counter == s.counter && writer > s.writer)) {
        s.counter = counter;
        s.writer = writer;
#if BUG_UNSYNCED_STORE
        /* kept in memory, to be made durable later */
#else
        persist(); /* before the acknowledgement leaves */
#endif
    }
    write(c, "A", 1);
}

int main(int argc, char **argv)
{
    me = argc > 1 ? atoi(argv[1]) : 0;
    nodes = argc > 2 ? atoi(argv[2]) : 3;
    if (me < 0 || nodes < 1 || nodes > CMC_NODES_MAX || me >= nodes)
        return 1;
    uint8_t rec[CMC_STATE_MAX];
    s.asking = NONE;
    if (cmc_recover(rec) == 2) {
        s.counter = rec[0];
        s.writer = rec[1];
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
        if (n == 3 && m[0] == 'S')
            on_store(c, m[1], m[2]);
        else if (n == 1 && m[0] == 'W')
            coordinate(c);
        close(c); /* a 'T', an EOF or anything else: nothing to do */
    }
}
