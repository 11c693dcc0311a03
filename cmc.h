/*
 * cmc.h: the C side of cmc, both front ends.
 *
 * Programs as nodes (cmc(7), "Programs as nodes"). A target program is
 * started as `PROGRAM NODE [ARGS...]`, one process per node, under cmc's
 * supervisor and cmc-preload.so. Node i listens on 127.0.0.1 port
 * CMC_PORT_BASE + i. After each change it reports its canonical logical
 * state on fd CMC_STATE_FD, and what it has made durable on fd
 * CMC_DURABLE_FD, each as one length byte then the bytes (at most
 * CMC_STATE_MAX). On a start after a crash, a read of CMC_DURABLE_FD returns
 * the last durable record (length byte, bytes); on a first start it returns
 * 0 bytes. See docs/DESIGN.md 6. Invariants of a program's model file are C
 * predicates over `struct cmc_view`:
 *     int NAME(const struct cmc_view *view);   nonzero when it holds
 * compiled into a shared object that the model file names.
 *
 * Cores (libcmc(3)). A core is a `struct cmc_core`: sizes and step
 * functions over a fixed-size, pointer-free state per node, which the
 * engine treats as bytes. It acts only through the cmc_send() ... cmc_reply()
 * functions below, never by writing `struct cmc_effects` itself. A shared
 * object exports its core as the symbol `cmc_core`; a static library may
 * name it as it likes. Properties of a core's model file are C predicates
 * over `struct cmc_world`:
 *     int NAME(const struct cmc_world *world);  nonzero when it holds
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
#define CMC_DOWN 3      /* crashed, not restarted yet (RESTART starts it again):
                         * no state; a property over every node's state says
                         * what a down node counts as. Before, a crash
                         * restarted the node at once and no view had one. */

struct cmc_record {
    uint8_t len;                  /* 0..CMC_STATE_MAX */
    uint8_t bytes[CMC_STATE_MAX];
};

struct cmc_node_view {
    uint8_t life;                 /* CMC_LIVE, CMC_EXITED, CMC_SIGNALED or CMC_DOWN */
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
    uint32_t clock;               /* whole logical seconds passed, moved by TIMEOUT */
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


/* ------------------------------------------------------------------------
 * Cores: in-process step functions (libcmc(3), cmc(7) "Cores and worlds").
 * ------------------------------------------------------------------------ */

#define CMC_CORE_ABI 1          /* struct cmc_core's `abi` */

/* The limits of in-process cores (cmc(7), LIMITS). Crossing one is an
 * error naming it, never a truncation. */
#define CMC_CORE_NODES_MAX 8    /* nodes in a model */
#define CMC_PAYLOAD_MAX 32      /* bytes of a message, persist record or reply */
#define CMC_EFFECTS_MAX 16      /* effects one call may emit */
#define CMC_ACTIONS_MAX 2048    /* possible actions in one world */
#define CMC_TIMERS_MAX 16       /* timers 0..15 per node */
#define CMC_WAITERS_MAX 8       /* waiters 0..7 per node */
#define CMC_SETTINGS_MAX 256    /* bytes of core settings */
#define CMC_BUDGET_MAX 255      /* every budget, and every queue */
#define CMC_CORE_STATE_MAX 4096 /* bytes of one node's state */

/* What a call is told happened: one event, one call. */
enum cmc_event_kind {
    CMC_EV_DELIVER = 1,  /* the oldest message from `deliver.from` arrives */
    CMC_EV_FIRE = 2,     /* armed timer `fire.timer` fired (it is disarmed) */
    CMC_EV_FLUSHED = 3,  /* the oldest pending persist reached disk */
    CMC_EV_WAKE = 4,     /* a wake of waiter `wake.waiter` emitted earlier */
    CMC_EV_CLIENT = 5,   /* a client request, `client.index` of this node */
    CMC_EV_RESTART = 6,  /* crashed and restarted: volatile bytes are zero */
    CMC_EV_RESET = 7,    /* the connection to `reset.peer` was reset */
    CMC_EV_ACTION = 8,   /* direct-actions cores: take action `action.index` */
};

struct cmc_event {
    uint32_t kind; /* enum cmc_event_kind */
    union {
        struct { uint8_t from; uint8_t len; const uint8_t *msg; } deliver;
        struct { uint8_t timer; } fire;
        struct { uint8_t waiter; } wake;
        struct { uint8_t index; } client;
        struct { uint8_t peer; } reset;
        struct { uint16_t index; } action;
    };
};

/* What a call may see besides its state; fixed for a run. */
struct cmc_ctx {
    uint8_t node;          /* the node called, below `nodes` */
    uint8_t nodes;         /* 1..CMC_CORE_NODES_MAX */
    uint8_t reserved[6];
    const void *settings;  /* the core's settings, `settings_size` bytes */
};

/* The effects sink. Written only by the functions below (the purity gate
 * rejects a core that writes `out->o` itself); the engine reads it after
 * each call and carries the effects out in order. */
enum cmc_effect_kind {
    CMC_FX_SEND = 1, CMC_FX_ARM = 2, CMC_FX_CANCEL = 3,
    CMC_FX_PERSIST = 4, CMC_FX_WAKE = 5, CMC_FX_REPLY = 6,
};

/* The first limit a call crossed; later effects are ignored. */
enum cmc_effect_error {
    CMC_FX_OK = 0,
    CMC_FX_TOO_MANY = 1,     /* more than CMC_EFFECTS_MAX effects */
    CMC_FX_TOO_LONG = 2,     /* a payload over CMC_PAYLOAD_MAX; `error_arg`: its length */
    CMC_FX_BAD_TIMER = 3,    /* a timer not below CMC_TIMERS_MAX; `error_arg`: it */
    CMC_FX_BAD_WAITER = 4,   /* a waiter not below CMC_WAITERS_MAX; `error_arg`: it */
};

struct cmc_effect {
    uint8_t kind;  /* enum cmc_effect_kind */
    uint8_t arg;   /* SEND: the receiver; ARM, CANCEL: the timer; WAKE: the waiter */
    uint8_t len;   /* SEND, PERSIST, REPLY: payload length */
    uint8_t bytes[CMC_PAYLOAD_MAX];
};

struct cmc_effects {
    uint32_t n;          /* effects in `o` */
    uint32_t error;      /* enum cmc_effect_error */
    uint32_t error_arg;  /* what crossed the limit, as the error says */
    uint32_t disabled;   /* cmc_not_enabled() was called */
    struct cmc_effect o[CMC_EFFECTS_MAX];
};

_Static_assert(sizeof(struct cmc_event) == 24, "struct cmc_event: 24 bytes");
_Static_assert(sizeof(struct cmc_ctx) == 16, "struct cmc_ctx: 16 bytes");
_Static_assert(sizeof(struct cmc_effect) == 35, "struct cmc_effect: 35 bytes");
_Static_assert(sizeof(struct cmc_effects) == 16 + 35 * CMC_EFFECTS_MAX, "struct cmc_effects");

static inline struct cmc_effect *cmc__effect(struct cmc_effects *out, uint8_t kind, uint8_t arg)
{
    if (out->error != CMC_FX_OK)
        return 0;
    if (out->n >= CMC_EFFECTS_MAX) {
        out->error = CMC_FX_TOO_MANY;
        out->error_arg = out->n + 1;
        return 0;
    }
    struct cmc_effect *e = &out->o[out->n++];
    e->kind = kind;
    e->arg = arg;
    e->len = 0;
    return e;
}

static inline void cmc__payload(struct cmc_effects *out, uint8_t kind, uint8_t arg, const void *bytes, unsigned len)
{
    if (len > CMC_PAYLOAD_MAX) {
        if (out->error == CMC_FX_OK) {
            out->error = CMC_FX_TOO_LONG;
            out->error_arg = len;
        }
        return;
    }
    struct cmc_effect *e = cmc__effect(out, kind, arg);
    if (e) {
        e->len = (uint8_t)len;
        memcpy(e->bytes, bytes, len);
    }
}

static inline void cmc__numbered(struct cmc_effects *out, uint8_t kind, unsigned n, unsigned max, uint32_t error)
{
    if (n >= max) {
        if (out->error == CMC_FX_OK) {
            out->error = error;
            out->error_arg = n;
        }
        return;
    }
    cmc__effect(out, kind, (uint8_t)n);
}

/* Sends `len` bytes to node `to`. */
static inline void cmc_send(struct cmc_effects *out, unsigned to, const void *msg, unsigned len)
{
    cmc__payload(out, CMC_FX_SEND, (uint8_t)(to > 255 ? 255 : to), msg, len);
}

/* Arms timer `timer`; arming an armed timer leaves it armed. */
static inline void cmc_arm(struct cmc_effects *out, unsigned timer)
{
    cmc__numbered(out, CMC_FX_ARM, timer, CMC_TIMERS_MAX, CMC_FX_BAD_TIMER);
}

/* Cancels timer `timer`, armed or not. */
static inline void cmc_cancel(struct cmc_effects *out, unsigned timer)
{
    cmc__numbered(out, CMC_FX_CANCEL, timer, CMC_TIMERS_MAX, CMC_FX_BAD_TIMER);
}

/* Queues a durable write; the engine applies it through apply_persist() on
 * FLUSH, or on a crash that keeps it. */
static inline void cmc_persist(struct cmc_effects *out, const void *record, unsigned len)
{
    cmc__payload(out, CMC_FX_PERSIST, 0, record, len);
}

/* Wakes waiter `waiter` of this node later (a WAKE action). */
static inline void cmc_wake(struct cmc_effects *out, unsigned waiter)
{
    cmc__numbered(out, CMC_FX_WAKE, waiter, CMC_WAITERS_MAX, CMC_FX_BAD_WAITER);
}

/* Replies to a client: appended to the ghost log with this node's number. */
static inline void cmc_reply(struct cmc_effects *out, const void *msg, unsigned len)
{
    cmc__payload(out, CMC_FX_REPLY, 0, msg, len);
}

/* Direct-actions cores: the action asked for is not enabled in this state.
 * The call must leave the state as it found it and emit nothing. */
static inline void cmc_not_enabled(struct cmc_effects *out)
{
    out->disabled = 1;
}

/* One setting: an unsigned little-endian integer of `width` bytes at
 * `offset` in the settings, set by `--set NAME=VALUE` or a model file's
 * [settings] table. */
struct cmc_setting {
    const char *name;  /* the key */
    const char *doc;   /* one line, for `cmc check --list` */
    uint32_t offset;   /* offset + width <= settings_size */
    uint32_t width;    /* 1, 2, 4 or 8 */
    uint64_t value;    /* the default */
};

/* The shape of a direct-actions (calibration) core (cmc(7), "Calibration
 * mode"): the world is one state, actions 0..actions-1 are tried in every
 * state, and `init` builds each of `initial_states` initial states. */
struct cmc_direct {
    uint32_t actions;         /* 1..CMC_ACTIONS_MAX */
    uint32_t initial_states;  /* at least 1 */
};

/* A core. Every function must be a pure function of its arguments: no
 * globals, no clock, no randomness, no I/O, no calls but mem*() and the
 * functions above. `state` is `state_size` bytes: zero for `init` of a
 * message-passing core. */
struct cmc_core {
    uint32_t abi;            /* CMC_CORE_ABI */
    uint32_t state_size;     /* 1..CMC_CORE_STATE_MAX */
    uint32_t durable_size;   /* 0..state_size: the leading bytes that survive a crash */
    uint32_t settings_size;  /* 0..CMC_SETTINGS_MAX */
    const char *name;        /* what reports and counterexample files call it */
    const struct cmc_setting *settings;  /* `settings_count` keys, or null */
    uint32_t settings_count;
    uint32_t reserved;
    /* Builds a node's initial state (`variant` 0), or a direct-actions
     * core's initial state `variant`. Required. */
    void (*init)(const struct cmc_ctx *ctx, void *state, uint32_t variant, struct cmc_effects *out);
    /* The only transition. Must leave the first `durable_size` bytes as they
     * are; the engine checks. Required. */
    void (*step)(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out);
    /* Applies one persist record to the durable bytes, and changes nothing
     * else; the engine checks. Null: a core that never persists. */
    void (*apply_persist)(const struct cmc_ctx *ctx, void *state, const uint8_t *record, uint32_t len);
    /* Null for a message-passing core; else fills `out` for `settings`. */
    void (*direct_actions)(const void *settings, struct cmc_direct *out);
    /* Null, or rejects settings the core cannot run with: returns a static
     * message naming the key, or null when they are fine. */
    const char *(*validate)(const void *settings);
    /* Null, or writes a label for direct action `index` (`RMPrepare(r2)`)
     * into `buf`, NUL-terminated, at most `cap` bytes with the NUL. */
    void (*action_label)(const void *settings, uint32_t index, char *buf, uint32_t cap);
    /* Null, or writes how traces show a node's state (`vote yes, decided
     * commit`) into `buf`, NUL-terminated, at most `cap` bytes with the NUL.
     * Null or an empty text: the state's bytes in hex. */
    void (*show_state)(const void *settings, const void *state, char *buf, uint32_t cap);
    /* Null, or writes how traces show a payload of `len` bytes: a message
     * from `from` to `to` (`kind` CMC_SHOW_MESSAGE), a persist record of
     * node `from` (CMC_SHOW_PERSIST) or a reply of node `from`
     * (CMC_SHOW_REPLY). Null or an empty text: the bytes in hex.
     * Counterexample files keep the bytes whatever it writes. */
    void (*show_payload)(const void *settings, uint32_t kind, uint32_t from, uint32_t to, const uint8_t *bytes,
                         uint32_t len, char *buf, uint32_t cap);
    /* Symmetry (`cmc --symmetry`, libcmc(3)). Null, or the nodes of a model
     * of `nodes` nodes that this core treats alike, bit n for node n:
     * renaming them among themselves must map every behaviour onto another,
     * and the properties must not tell renamed worlds apart. */
    uint32_t (*interchangeable)(const void *settings, uint32_t nodes);
    /* Null (no state holds a node number), or renames the node numbers held
     * in one node's `state` (a peer, a bitmap of peers): node n becomes
     * `to[n]`, for n below CMC_CORE_NODES_MAX. The engine moves the state
     * itself to its node's new number. */
    void (*rename_state)(const void *settings, const uint8_t *to, void *state);
    /* Null (no payload holds a node number), or renames those in a payload
     * of `len` bytes, `kind`, `from` and `dest` as show_payload() gets them,
     * numbered before the renaming. */
    void (*rename_payload)(const void *settings, const uint8_t *to, uint32_t kind, uint32_t from, uint32_t dest,
                           uint8_t *bytes, uint32_t len);
};

/* What show_payload() is asked to show. */
enum cmc_show_kind { CMC_SHOW_MESSAGE = 1, CMC_SHOW_PERSIST = 2, CMC_SHOW_REPLY = 3 };

_Static_assert(sizeof(struct cmc_setting) == 32, "struct cmc_setting: 32 bytes");
_Static_assert(sizeof(struct cmc_core) == 128, "struct cmc_core: 128 bytes");

/* Exports core `var` as `cmc_core`, the symbol a model file's `core` is
 * looked up by. A weak alias: two cores in one static library do not
 * clash. */
#define CMC_EXPORT_CORE(var) \
    extern const struct cmc_core cmc_core __attribute__((weak, alias(#var)))

/* What a core's C property reads: one world, valid for the call only. */
struct cmc_message {
    uint8_t from, to, len;
    uint8_t bytes[CMC_PAYLOAD_MAX];
};

struct cmc_record_of {
    uint8_t node, len;  /* a persist record pending at, or a reply from, `node` */
    uint8_t bytes[CMC_PAYLOAD_MAX];
};

struct cmc_node_env {
    uint8_t clients_left;  /* client requests this node has still to get */
    uint8_t wakes;         /* pending wakes, by bit */
    uint16_t timers;       /* armed timers, by bit */
    uint8_t resets;        /* pending connection resets, by peer bit */
    uint8_t reserved[3];
};

struct cmc_world {
    uint32_t version;                  /* CMC_CORE_ABI */
    uint32_t nodes;                    /* 1..CMC_CORE_NODES_MAX */
    uint32_t state_size;               /* the core's state_size */
    uint32_t messages;                 /* entries in `message` */
    uint32_t persists;                 /* entries in `persist` */
    uint32_t replies;                  /* entries in `reply` */
    const uint8_t *states;             /* nodes * state_size bytes, node 0 first */
    const void *settings;              /* the model's settings */
    const struct cmc_node_env *env;    /* one per node */
    const struct cmc_message *message; /* in flight, in canonical order */
    const struct cmc_record_of *persist; /* pending persists, by node, oldest first */
    const struct cmc_record_of *reply; /* the ghost log, oldest first */
};

_Static_assert(sizeof(struct cmc_world) == 72, "struct cmc_world: 72 bytes");

/* Node `node`'s state in `world`. */
static inline const void *cmc_state(const struct cmc_world *world, unsigned node)
{
    return world->states + (size_t)node * world->state_size;
}

#endif
