/*
 * logship: log shipping from a primary to its backups over TCP, as
 * streaming replication does it, where losing one message is the whole
 * story.
 *
 * Protocol. Node 0 is the primary; nodes 1 .. N-1 (N is the second
 * argument, 3 by default) are backups. A backup dials the primary,
 * subscribes with {'B', node} and then reads that connection; when it
 * ends (a reset: TCP lost something, and says so), it dials again and
 * subscribes again. The primary waits in accept(): a connection that reads
 * {'B', node} is a backup's subscription, which it keeps (replacing the
 * backup's earlier one, if it had one); one that reads 'T' is its timer
 * (the checker's TIMEOUT). Each time its timer fires it appends an entry to
 * its log (entry k, 1-based, holds the value k; at most LOG_MAX entries)
 * and ships to every subscribed backup the message {'L', first, count,
 * entries...}: its entries from index `first` on; a backup whose
 * connection fails the write (it was reset) is no longer subscribed. The
 * primary ships its whole log every time (first = 1), and catches up a
 * backup that subscribes with the whole log at once. A backup writes each
 * entry it receives at its index, and its log grows to the last index
 * written. A 'T' (its timer fired) means nothing to a backup. Nothing is
 * durable: crashes are not part of this model. The primary ignores
 * SIGPIPE, as a server must: a write to a reset connection fails with
 * EPIPE instead of killing it.
 *
 * State on fd 3: {role, phase, subscribed, length, log...}: role 0 for the
 * primary and 1 for a backup; where the node is in its code (IDLE: the
 * primary in accept; READING: the primary reading a connection it
 * accepted, or a backup reading its subscription); for the primary the
 * bitmap of subscribed backups (a backup: 0); and the log, `length` bytes
 * (a never-written entry is 0). A backup reports its empty log before it
 * dials and subscribes. Each change is reported before what follows it, as cmc(7)
 * asks, not only before the node waits: the primary may be held between
 * two writes while a backup reads the first.
 *
 * Property (examples/c/logship_props.c, and the Rust invariant in
 * cmc/tests/process_examples.rs):
 *   backups_are_prefixes: every backup's log is a prefix of the primary's
 *     log: no hole, no entry the primary does not have at that index.
 *
 * Planted bug:
 *   BUG_SEND_DELTA: the primary ships only the entry it just appended
 *     (first = k), and does not catch up a backup that subscribes again
 *     while still subscribed, assuming that what a write() accepted
 *     arrived. TCP loses nothing in the middle of a connection, but a
 *     write() that returned may still be lost with the connection: when a
 *     reset takes the message carrying an entry (a DROP), and the backup
 *     subscribes again before the primary writes to the old connection,
 *     the next entry leaves a hole in the backup's log. Caught by
 *     backups_are_prefixes; it needs a dropped message (FIFO delivery
 *     alone never leaves a hole, since a new backup is caught up with the
 *     whole log).
 *
 * Built -no-pie by the tests (cmc/tests/process_support): cc -no-pie -I.
 */
#include "cmc.h"

#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef BUG_SEND_DELTA
#define BUG_SEND_DELTA 0
#endif

enum { IDLE = 1, READING = 2 };
#define LOG_MAX 8

static struct {
    uint8_t role, phase, subscribed, length, log[LOG_MAX];
} s;

static void report(void)
{
    cmc_record_write(CMC_STATE_FD, &s, 4 + s.length);
}

/* Writes {'L', first, count, entries...}: the log from index `first` on.
 * Returns write()'s result: -1 once the connection was reset. */
static ssize_t ship(int c, uint8_t first)
{
    uint8_t msg[3 + LOG_MAX] = {'L', first, s.length - first + 1};
    memcpy(msg + 3, s.log + first - 1, msg[2]);
    return write(c, msg, 3 + msg[2]);
}

/* Backup b's connection failed: it is no longer subscribed. */
static void drop_backup(int *backup, int b)
{
    close(backup[b]);
    s.subscribed &= (uint8_t)~(1 << b);
    report();
}

static int primary(int nodes)
{
    int backup[CMC_NODES_MAX];
    signal(SIGPIPE, SIG_IGN);
    int l = cmc_listen(0);
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
        if (n == 2 && m[0] == 'B' && m[1] > 0 && m[1] < nodes) {
            int again = s.subscribed >> m[1] & 1;
            if (again)
                close(backup[m[1]]); /* its earlier connection ended */
            backup[m[1]] = c; /* kept for shipping, never read again */
            s.subscribed |= 1 << m[1];
            int catch_up = s.length > 0;
#if BUG_SEND_DELTA
            catch_up = catch_up && !again; /* it had everything shipped */
#endif
            if (catch_up && ship(c, 1) < 0)
                drop_backup(backup, m[1]);
            continue;
        }
        close(c);
        if (n != 1 || m[0] != 'T' || s.length == LOG_MAX)
            continue;
        s.log[s.length] = s.length + 1;
        s.length++;
        /* Reported after each change, before it is shipped: a backup may
         * read the entry while the primary still writes to the others. */
        report();
        uint8_t first = 1;
#if BUG_SEND_DELTA
        first = s.length; /* the earlier entries surely arrived */
#endif
        for (int b = 1; b < nodes; b++)
            if (s.subscribed >> b & 1 && ship(backup[b], first) < 0)
                drop_backup(backup, b);
    }
}

/* Dials the primary and subscribes; -1 if it is not there. */
static int subscribe(int node)
{
    int c = cmc_dial(0);
    uint8_t hello[2] = {'B', (uint8_t)node};
    if (c >= 0)
        write(c, hello, sizeof hello);
    return c;
}

static int backup(int node)
{
    s.role = 1;
    s.phase = READING;
    report(); /* before it subscribes: it may be held mid-step there */
    int c = subscribe(node);
    if (c < 0)
        return 2;
    for (;;) {
        report();
        uint8_t m[CMC_WRITE_MAX];
        ssize_t n = read(c, m, sizeof m);
        if (n <= 0) {
            /* The connection ended (reset): subscribe again. */
            close(c);
            if ((c = subscribe(node)) < 0)
                return 2;
            continue;
        }
        if (n < 3 || m[0] != 'L' || m[1] < 1 || n != 3 + m[2] || m[1] - 1 + m[2] > LOG_MAX)
            continue; /* a 'T', or nothing this backup understands */
        for (int i = 0; i < m[2]; i++)
            s.log[m[1] - 1 + i] = m[3 + i];
        if (m[1] - 1 + m[2] > s.length)
            s.length = m[1] - 1 + m[2];
    }
}

int main(int argc, char **argv)
{
    int me = argc > 1 ? atoi(argv[1]) : 0;
    int nodes = argc > 2 ? atoi(argv[2]) : 3;
    if (me < 0 || nodes < 1 || nodes > CMC_NODES_MAX || me >= nodes)
        return 1;
    return me == 0 ? primary(nodes) : backup(me);
}
