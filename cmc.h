/*
 * cmc.h: the C side of cmc's process front end.
 *
 * A target program is started as `PROGRAM NODE [ARGS...]`, one process per
 * node, under cmc's supervisor and cmc-preload.so. Node i listens on
 * 127.0.0.1 port CMC_PORT_BASE + i. After each change it reports its
 * canonical logical state on fd CMC_STATE_FD, and what it has made durable
 * on fd CMC_DURABLE_FD, each as one length byte then the bytes (at most
 * CMC_STATE_MAX). On a start after a crash, a read of CMC_DURABLE_FD returns
 * the last durable record (length byte, bytes); on a first start it returns
 * 0 bytes. See cmc(7), "Programs as nodes", and docs/DESIGN.md 6.
 *
 * Invariants of a model file are C predicates over `struct cmc_view`:
 *     int NAME(const struct cmc_view *view);   nonzero when it holds
 * compiled into a shared object that the model file names.
 */
#ifndef CMC_H
#define CMC_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CMC_VIEW_VERSION 1

#define CMC_PORT_BASE 20000
#define CMC_STATE_FD 3
#define CMC_DURABLE_FD 193

#define CMC_NODES_MAX 8     /* nodes in a model */
#define CMC_STATE_MAX 64    /* bytes of one state or durable record */
#define CMC_WRITE_MAX 64    /* bytes of one write on a connection */
#define CMC_REPLIES_MAX 64  /* replies in the ghost log */

/* enum cmc_life: what became of a node's process. */
#define CMC_LIVE 0      /* running, or blocked in a modelled call */
#define CMC_EXITED 1    /* exited; `status` is its exit code */
#define CMC_SIGNALED 2  /* killed by a signal it raised; `status` is the signal */

struct cmc_record {
    uint8_t len;                  /* 0..CMC_STATE_MAX */
    uint8_t bytes[CMC_STATE_MAX];
};

struct cmc_node_view {
    uint8_t life;                 /* CMC_LIVE, CMC_EXITED or CMC_SIGNALED */
    uint8_t has_durable;          /* 1 once the node wrote fd 193 */
    uint8_t reserved[2];          /* zero */
    int32_t status;               /* exit code or signal, 0 while live */
    struct cmc_record state;      /* the last record written to fd 3 */
    struct cmc_record durable;    /* the last record written to fd 193 */
};

struct cmc_reply {
    uint8_t node;                 /* the node that wrote it */
    uint8_t len;                  /* 0..CMC_WRITE_MAX */
    uint8_t bytes[CMC_WRITE_MAX];
};

struct cmc_view {
    uint32_t version;             /* CMC_VIEW_VERSION */
    uint32_t nodes;               /* 1..CMC_NODES_MAX */
    uint32_t clock;               /* logical seconds: one per TIMEOUT */
    uint32_t replies;             /* entries used in `reply` */
    struct cmc_node_view node[CMC_NODES_MAX];  /* the first `nodes` are used */
    struct cmc_reply reply[CMC_REPLIES_MAX];   /* the ghost log, oldest first */
};

/* Writes one record (length byte, then `len` bytes) to `fd`, which is
 * CMC_STATE_FD or CMC_DURABLE_FD, in one write. Returns 0, or -1 when `len`
 * is over CMC_STATE_MAX or the write fails. */
static inline int cmc_record_write(int fd, const void *bytes, unsigned len)
{
    uint8_t buf[1 + CMC_STATE_MAX];
    if (len > CMC_STATE_MAX)
        return -1;
    buf[0] = (uint8_t)len;
    for (unsigned i = 0; i < len; i++)
        buf[1 + i] = ((const uint8_t *)bytes)[i];
    return write(fd, buf, 1 + len) == (ssize_t)(1 + len) ? 0 : -1;
}

/* Reads the durable record of a restarted node into `bytes` (at least
 * CMC_STATE_MAX bytes). Returns its length, or -1 on a first start. */
static inline int cmc_recover(void *bytes)
{
    uint8_t buf[1 + CMC_STATE_MAX];
    ssize_t n = read(CMC_DURABLE_FD, buf, sizeof buf);
    if (n <= 0 || buf[0] > CMC_STATE_MAX || n != 1 + buf[0])
        return -1;
    for (int i = 0; i < buf[0]; i++)
        ((uint8_t *)bytes)[i] = buf[1 + i];
    return buf[0];
}

/* The port convention: node `node` listens on 127.0.0.1, port
 * CMC_PORT_BASE + node. */
static inline struct sockaddr_in cmc_address(int node)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(CMC_PORT_BASE + node);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

/* socket, bind and listen on node `node`'s port. Returns the listening
 * socket, or -1. */
static inline int cmc_listen(int node)
{
    struct sockaddr_in a = cmc_address(node);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 16) < 0)
        return -1;
    return l;
}

/* socket and connect to node `node`. Returns the connection, or -1. */
static inline int cmc_dial(int node)
{
    struct sockaddr_in a = cmc_address(node);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c >= 0 && connect(c, (struct sockaddr *)&a, sizeof a) < 0) {
        close(c);
        return -1;
    }
    return c;
}

#endif
