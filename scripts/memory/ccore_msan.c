/*
 * ccore_msan: runs one C core (cmc.h, "Cores") under MemorySanitizer, for
 * the memory gate (scripts/memory_gate.sh).
 *
 *   ccore_msan [--walks N] [--steps N] [--seed N] [--nodes N]
 *              [--clients N] [--crashes N] [--drops N]
 *
 * MSan needs the whole program instrumented, and the engine is Rust, so
 * this driver plays the engine instead: it is compiled with the core's
 * source into one program (scripts/memory/msan.mk), and finds the core as
 * the symbol `cmc_core` (CMC_EXPORT_CORE), or as CMC_CORE_VAR when built
 * with -DCMC_CORE_VAR=NAME.
 *
 * The settings are the defaults of the core's `settings` table (the rest
 * of the settings bytes zero), and validate() must accept them. Then
 * seeded random walks, each of at most --steps calls, from a fixed seed:
 *
 * - a message-passing core: init on every node, then at each step one of
 *   the events the engine could produce, chosen at random: DELIVER the
 *   head of a channel (FIFO), DROP it (a budget; the connection resets,
 *   both ends told by RESET), FIRE an armed timer, FLUSH the oldest
 *   pending persist (apply_persist, then FLUSHED), WAKE a pending waiter,
 *   CLIENT (a budget per node), CRASH(n, j) (a budget: the first j pending
 *   persists applied, the volatile bytes zeroed, timers, wakes, persists
 *   and the node's channels cleared, a reset pending at each peer, then
 *   RESTART), RESET a pending connection reset;
 * - a direct-actions core: init with each variant, then at each step every
 *   action index from the current state, and one of those enabled taken.
 *   Every action label is asked for once.
 *
 * What the engine hands a core is initialised where the engine
 * initialises it, and poisoned where a core must not read or must write:
 * a direct-actions core's state before init (cmc.h promises zero only to
 * message-passing cores), the effects entries (`o`, which the engine never
 * clears between calls), the bytes of a message or record past its length,
 * the settings past settings_size, the state past state_size. After every
 * call the driver checks, with __msan_test_shadow, that the whole state
 * and every byte of every effect the core emitted that the engine reads
 * (kind, arg, len, the payload's len bytes; error_arg when error is set)
 * are initialised; a byte that is not is reported by the driver (which
 * call, which byte) and then by MSan itself (__msan_check_mem_is_initialized,
 * with the origin of the byte), which ends the run with its exit code. An
 * uninitialised value the core branches on, or indexes with, MSan stops at
 * by itself, inside the core.
 *
 * A walk ends early, and is counted, where the engine would report an
 * error (a queue or limit crossed, a send to no node, a persist with no
 * apply_persist): such errors are the engine's to report, not this
 * gate's. Exit 0 when every walk ran clean, 2 on bad arguments or a core
 * the driver cannot run, MSan's exit code at the first report.
 */
#include "cmc.h"

#include <sanitizer/msan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CMC_CORE_VAR
extern const struct cmc_core CMC_CORE_VAR;
#define CORE (&CMC_CORE_VAR)
#else
extern const struct cmc_core cmc_core;
#define CORE (&cmc_core)
#endif

#ifndef CMC_MSAN_EXITCODE
#define CMC_MSAN_EXITCODE 86
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

/* Read by the MSan runtime before it is initialised: not instrumented. */
__attribute__((no_sanitize("memory"), used)) const char *__msan_default_options(void)
{
    return "exitcode=" STR(CMC_MSAN_EXITCODE) ":halt_on_error=1";
}

/* The queues the driver keeps, each as long as the engine's (cmc(7),
 * LIMITS: 255 for each budget and queue). */
#define QUEUE_MAX CMC_BUDGET_MAX
/* Bytes asked of action_label(), as the engine asks. */
#define LABEL_CAP 128
/* Poisoned bytes past a state, so that a read past state_size is seen. */
#define STATE_SLACK 64

/* ------------------------------------------------------------------------
 * Fixed-seed randomness: SplitMix64. */

static uint64_t seed_state;

static uint32_t pick(uint32_t bound)
{
    uint64_t z = (seed_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (uint32_t)(z % bound);
}

/* ------------------------------------------------------------------------
 * The world the driver keeps for a message-passing core. */

struct payload {
    uint8_t len;
    uint8_t bytes[CMC_PAYLOAD_MAX];
};

struct queue {
    uint32_t head, count;
    struct payload item[QUEUE_MAX];
};

struct world {
    uint8_t *state[CMC_CORE_NODES_MAX];
    struct queue channel[CMC_CORE_NODES_MAX][CMC_CORE_NODES_MAX]; /* [from][to] */
    struct queue persist[CMC_CORE_NODES_MAX];
    uint32_t timers[CMC_CORE_NODES_MAX];  /* armed, by bit */
    uint32_t wakes[CMC_CORE_NODES_MAX];   /* pending, by bit */
    uint32_t resets[CMC_CORE_NODES_MAX];  /* pending, by peer bit */
    uint32_t clients_left[CMC_CORE_NODES_MAX];
    uint32_t clients_seen[CMC_CORE_NODES_MAX];
    uint32_t crashes_left, drops_left;
};

static struct world world;

/* ------------------------------------------------------------------------
 * The run's settings and what is being called, for reports. */

static struct {
    uint32_t walks, steps, nodes, clients, crashes, drops;
    uint64_t seed;
} opt = {200, 60, 3, 2, 2, 1, 0x5eed};

static uint8_t settings[CMC_SETTINGS_MAX];
static uint32_t walk_at, step_at;
static char doing[160];
static uint64_t calls;
static uint64_t events[CMC_EV_ACTION + 2]; /* by kind; the last: apply_persist */
static uint32_t walks_cut;

static void fail_setup(const char *what)
{
    fprintf(stderr, "ccore_msan: %s: %s\n", CORE->name ? CORE->name : "(no name)", what);
    exit(2);
}

/* Checks `len` bytes at `p`, which the engine will read: when one is
 * uninitialised, says which call left it and what it is, then lets MSan
 * report it with its origin (and end the run). */
static void must_be_initialised(const void *p, size_t len, const char *what)
{
    intptr_t at = __msan_test_shadow(p, len);
    if (at < 0)
        return;
    fprintf(stderr,
            "ccore_msan: %s: after %s: byte %ld of %s is uninitialised (walk %u, step %u, seed %#llx); "
            "MemorySanitizer's report follows\n",
            CORE->name, doing, (long)at, what, walk_at, step_at, (unsigned long long)opt.seed);
    __msan_check_mem_is_initialized((const char *)p + at, 1);
    /* Not reached: MSan ends the run at its report. */
    abort();
}

/* A fresh effects sink: the counters cleared, as the engine clears them,
 * the entries poisoned (the engine does not clear them). */
static void effects_clear(struct cmc_effects *out)
{
    out->n = 0;
    out->error = CMC_FX_OK;
    out->disabled = 0;
    __msan_poison(&out->error_arg, sizeof out->error_arg);
    __msan_poison(out->o, sizeof out->o);
}

/* The bytes of the effects the engine reads. */
static void effects_check(const struct cmc_effects *out)
{
    char what[64];
    must_be_initialised(&out->n, sizeof out->n, "the effects' count");
    must_be_initialised(&out->error, sizeof out->error, "the effects' error");
    must_be_initialised(&out->disabled, sizeof out->disabled, "the effects' disabled flag");
    if (out->error != CMC_FX_OK)
        must_be_initialised(&out->error_arg, sizeof out->error_arg, "the effects' error_arg");
    uint32_t n = out->n < CMC_EFFECTS_MAX ? out->n : CMC_EFFECTS_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const struct cmc_effect *e = &out->o[i];
        snprintf(what, sizeof what, "effect %u (kind, arg, len)", i);
        must_be_initialised(e, 3, what);
        if (e->kind == CMC_FX_SEND || e->kind == CMC_FX_PERSIST || e->kind == CMC_FX_REPLY) {
            snprintf(what, sizeof what, "the payload of effect %u (kind %u, len %u)", i, e->kind, e->len);
            must_be_initialised(e->bytes, e->len <= CMC_PAYLOAD_MAX ? e->len : CMC_PAYLOAD_MAX, what);
        }
    }
}

static uint8_t *state_alloc(void)
{
    uint8_t *s = malloc(CORE->state_size + STATE_SLACK);
    if (!s)
        fail_setup("out of memory");
    __msan_poison(s + CORE->state_size, STATE_SLACK);
    return s;
}

/* Checks that a text a core wrote into `buf` is initialised up to and with
 * its NUL (the engine reads it so far). */
static void text_check(const char *buf, size_t cap, const char *what)
{
    size_t len = 0;
    while (len < cap && __msan_test_shadow(buf + len, 1) < 0 && buf[len] != 0)
        len++;
    must_be_initialised(buf, len < cap ? len + 1 : cap, what);
}

static void state_check(const uint8_t *s, unsigned node)
{
    char what[48];
    snprintf(what, sizeof what, "the state of node %u", node);
    must_be_initialised(s, CORE->state_size, what);
    if (CORE->show_state) {
        /* As traces show it. */
        char buf[LABEL_CAP * 2];
        __msan_poison(buf, sizeof buf);
        CORE->show_state(settings, s, buf, sizeof buf);
        calls++;
        text_check(buf, sizeof buf, "the text show_state() wrote");
    }
    if (CORE->interchangeable && CORE->rename_state) {
        /* As symmetry renames it: a random permutation of the
         * interchangeable nodes, on a copy. */
        uint32_t set = CORE->interchangeable(settings, opt.nodes);
        calls++;
        uint8_t to[CMC_CORE_NODES_MAX], members[CMC_CORE_NODES_MAX];
        unsigned count = 0;
        for (unsigned n = 0; n < CMC_CORE_NODES_MAX; n++) {
            to[n] = (uint8_t)n;
            if (n < opt.nodes && (set & (1u << n)))
                members[count++] = (uint8_t)n;
        }
        for (unsigned i = 0; i < count; i++) {
            unsigned j = i + pick(count - i);
            uint8_t t = members[i];
            members[i] = members[j];
            members[j] = t;
        }
        for (unsigned i = 0, k = 0; i < CMC_CORE_NODES_MAX; i++)
            if (i < opt.nodes && (set & (1u << i)))
                to[i] = members[k++];
        uint8_t *copy = state_alloc();
        memcpy(copy, s, CORE->state_size);
        CORE->rename_state(settings, to, copy);
        calls++;
        must_be_initialised(copy, CORE->state_size, "the state rename_state() renamed");
        free(copy);
    }
}

static struct cmc_ctx ctx_for(unsigned node, unsigned nodes)
{
    struct cmc_ctx c;
    memset(&c, 0, sizeof c);
    c.node = (uint8_t)node;
    c.nodes = (uint8_t)nodes;
    c.settings = settings;
    return c;
}

static const char *event_name(uint32_t kind)
{
    static const char *const names[] = {"?", "DELIVER", "FIRE", "FLUSHED", "WAKE", "CLIENT", "RESTART", "RESET", "ACTION"};
    return kind <= CMC_EV_ACTION ? names[kind] : "?";
}

/* One step() call, checked. */
static void call_step(uint8_t *state, unsigned node, unsigned nodes, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct cmc_ctx c = ctx_for(node, nodes);
    snprintf(doing, sizeof doing, "step(node %u, %s %u)", node, event_name(ev->kind),
             ev->kind == CMC_EV_ACTION ? ev->action.index : ev->deliver.from);
    effects_clear(out);
    CORE->step(&c, state, ev, out);
    calls++;
    events[ev->kind <= CMC_EV_ACTION ? ev->kind : 0]++;
    state_check(state, node);
    effects_check(out);
}

static void call_init(uint8_t *state, unsigned node, unsigned nodes, uint32_t variant, struct cmc_effects *out)
{
    struct cmc_ctx c = ctx_for(node, nodes);
    snprintf(doing, sizeof doing, "init(node %u, variant %u)", node, variant);
    effects_clear(out);
    CORE->init(&c, state, variant, out);
    calls++;
    events[0]++;
    state_check(state, node);
    effects_check(out);
}

static void call_apply_persist(uint8_t *state, unsigned node, const struct payload *record)
{
    /* The record as the engine passes it: its length, nothing readable past. */
    uint8_t bytes[CMC_PAYLOAD_MAX];
    memcpy(bytes, record->bytes, record->len);
    __msan_poison(bytes + record->len, sizeof bytes - record->len);
    struct cmc_ctx c = ctx_for(node, opt.nodes);
    snprintf(doing, sizeof doing, "apply_persist(node %u, a record of %u bytes)", node, record->len);
    CORE->apply_persist(&c, state, bytes, record->len);
    calls++;
    events[CMC_EV_ACTION + 1]++;
    state_check(state, node);
}

/* ------------------------------------------------------------------------
 * Message-passing cores. */

static int queue_push(struct queue *q, const uint8_t *bytes, uint8_t len)
{
    if (q->count >= QUEUE_MAX)
        return 0;
    struct payload *p = &q->item[(q->head + q->count) % QUEUE_MAX];
    memset(p, 0, sizeof *p);
    p->len = len;
    memcpy(p->bytes, bytes, len);
    q->count++;
    return 1;
}

static struct payload queue_pop(struct queue *q)
{
    struct payload p = q->item[q->head];
    q->head = (q->head + 1) % QUEUE_MAX;
    q->count--;
    return p;
}

static void queue_clear(struct queue *q)
{
    q->head = 0;
    q->count = 0;
}

/* Carries out node `node`'s effects as the engine would. Returns 0 where
 * the engine would report an error, which ends the walk. */
static int carry_out(unsigned node, const struct cmc_effects *out)
{
    if (out->error != CMC_FX_OK || out->n > CMC_EFFECTS_MAX)
        return 0;
    for (uint32_t i = 0; i < out->n; i++) {
        const struct cmc_effect *e = &out->o[i];
        if (e->len > CMC_PAYLOAD_MAX)
            return 0;
        switch (e->kind) {
        case CMC_FX_SEND:
            if (e->arg >= opt.nodes || !queue_push(&world.channel[node][e->arg], e->bytes, e->len))
                return 0;
            break;
        case CMC_FX_ARM:
            if (e->arg >= CMC_TIMERS_MAX)
                return 0;
            world.timers[node] |= 1u << e->arg;
            break;
        case CMC_FX_CANCEL:
            if (e->arg >= CMC_TIMERS_MAX)
                return 0;
            world.timers[node] &= ~(1u << e->arg);
            break;
        case CMC_FX_PERSIST:
            if (!CORE->apply_persist || !queue_push(&world.persist[node], e->bytes, e->len))
                return 0;
            break;
        case CMC_FX_WAKE:
            if (e->arg >= CMC_WAITERS_MAX)
                return 0;
            world.wakes[node] |= 1u << e->arg;
            break;
        case CMC_FX_REPLY:
            break;
        default:
            return 0;
        }
    }
    return 1;
}

/* The engine's events, as candidates for one step. */
enum what { DELIVER, DROP, FIRE, FLUSH, WAKE, CLIENT, CRASH, RESET };

struct candidate {
    uint8_t what, node, arg;
};

static struct candidate candidates[CMC_CORE_NODES_MAX * (CMC_CORE_NODES_MAX * 2 + CMC_TIMERS_MAX + CMC_WAITERS_MAX + QUEUE_MAX + 8)];

static unsigned enabled(void)
{
    unsigned n = 0, nodes = opt.nodes;
#define ADD(w, nd, a) (candidates[n++] = (struct candidate){(w), (uint8_t)(nd), (uint8_t)(a)})
    for (unsigned i = 0; i < nodes; i++) {
        for (unsigned to = 0; to < nodes; to++) {
            if (world.channel[i][to].count > 0) {
                ADD(DELIVER, i, to);
                if (world.drops_left > 0)
                    ADD(DROP, i, to);
            }
        }
        for (unsigned t = 0; t < CMC_TIMERS_MAX; t++)
            if (world.timers[i] & (1u << t))
                ADD(FIRE, i, t);
        if (world.persist[i].count > 0)
            ADD(FLUSH, i, 0);
        for (unsigned w = 0; w < CMC_WAITERS_MAX; w++)
            if (world.wakes[i] & (1u << w))
                ADD(WAKE, i, w);
        if (world.clients_left[i] > 0)
            ADD(CLIENT, i, 0);
        if (world.crashes_left > 0)
            for (unsigned j = 0; j <= world.persist[i].count; j++)
                ADD(CRASH, i, j);
        for (unsigned p = 0; p < nodes; p++)
            if (world.resets[i] & (1u << p))
                ADD(RESET, i, p);
    }
#undef ADD
    return n;
}

/* Takes one candidate. Returns 0 where the engine would stop with an error. */
static int take(struct candidate c)
{
    static struct cmc_effects out;
    struct cmc_event ev;
    memset(&ev, 0, sizeof ev);
    unsigned n = c.node;
    uint8_t msg[CMC_PAYLOAD_MAX];
    switch (c.what) {
    case DELIVER: {
        /* From c.node to c.arg: the receiver steps. The message lives in a
         * buffer whose bytes past its length are poisoned. */
        struct payload p = queue_pop(&world.channel[n][c.arg]);
        memcpy(msg, p.bytes, p.len);
        __msan_poison(msg + p.len, sizeof msg - p.len);
        ev.kind = CMC_EV_DELIVER;
        ev.deliver.from = (uint8_t)n;
        ev.deliver.len = p.len;
        ev.deliver.msg = msg;
        n = c.arg;
        break;
    }
    case DROP:
        /* FIFO: the connection resets, both directions emptied, each end
         * told. No core call. */
        world.drops_left--;
        queue_clear(&world.channel[n][c.arg]);
        queue_clear(&world.channel[c.arg][n]);
        if (c.arg != n) {
            world.resets[n] |= 1u << c.arg;
            world.resets[c.arg] |= 1u << n;
        }
        return 1;
    case FIRE:
        world.timers[n] &= ~(1u << c.arg);
        ev.kind = CMC_EV_FIRE;
        ev.fire.timer = c.arg;
        break;
    case FLUSH: {
        struct payload p = queue_pop(&world.persist[n]);
        call_apply_persist(world.state[n], n, &p);
        ev.kind = CMC_EV_FLUSHED;
        break;
    }
    case WAKE:
        world.wakes[n] &= ~(1u << c.arg);
        ev.kind = CMC_EV_WAKE;
        ev.wake.waiter = c.arg;
        break;
    case CLIENT:
        world.clients_left[n]--;
        ev.kind = CMC_EV_CLIENT;
        ev.client.index = (uint8_t)world.clients_seen[n]++;
        break;
    case CRASH:
        world.crashes_left--;
        for (unsigned j = 0; j < c.arg; j++) {
            struct payload p = queue_pop(&world.persist[n]);
            call_apply_persist(world.state[n], n, &p);
        }
        memset(world.state[n] + CORE->durable_size, 0, CORE->state_size - CORE->durable_size);
        world.timers[n] = 0;
        world.wakes[n] = 0;
        queue_clear(&world.persist[n]);
        for (unsigned p = 0; p < opt.nodes; p++) {
            queue_clear(&world.channel[n][p]);
            queue_clear(&world.channel[p][n]);
            if (p != n)
                world.resets[p] |= 1u << n;
        }
        world.resets[n] = 0;
        ev.kind = CMC_EV_RESTART;
        break;
    case RESET:
        world.resets[n] &= ~(1u << c.arg);
        ev.kind = CMC_EV_RESET;
        ev.reset.peer = c.arg;
        break;
    }
    call_step(world.state[n], n, opt.nodes, &ev, &out);
    return carry_out(n, &out);
}

static void walk_messages(void)
{
    static struct cmc_effects out;
    for (unsigned i = 0; i < opt.nodes; i++)
        world.state[i] = state_alloc();
    for (walk_at = 0; walk_at < opt.walks; walk_at++) {
        step_at = 0;
        for (unsigned i = 0; i < CMC_CORE_NODES_MAX; i++) {
            for (unsigned j = 0; j < CMC_CORE_NODES_MAX; j++)
                queue_clear(&world.channel[i][j]);
            queue_clear(&world.persist[i]);
            world.timers[i] = world.wakes[i] = world.resets[i] = 0;
            world.clients_left[i] = opt.clients;
            world.clients_seen[i] = 0;
        }
        world.crashes_left = opt.crashes;
        world.drops_left = opt.drops;
        int ok = 1;
        /* The engine's initial world: every node's state zero, then init. */
        for (unsigned i = 0; i < opt.nodes && ok; i++) {
            memset(world.state[i], 0, CORE->state_size);
            call_init(world.state[i], i, opt.nodes, 0, &out);
            ok = carry_out(i, &out);
        }
        for (step_at = 1; ok && step_at <= opt.steps; step_at++) {
            unsigned n = enabled();
            if (n == 0)
                break;
            ok = take(candidates[pick(n)]);
        }
        walks_cut += !ok;
    }
}

/* ------------------------------------------------------------------------
 * Direct-actions cores. */

static void walk_actions(void)
{
    static struct cmc_effects out;
    struct cmc_direct d;
    __msan_poison(&d, sizeof d);
    snprintf(doing, sizeof doing, "direct_actions()");
    CORE->direct_actions(settings, &d);
    calls++;
    must_be_initialised(&d, sizeof d, "struct cmc_direct");
    if (d.actions == 0 || d.actions > CMC_ACTIONS_MAX || d.initial_states == 0)
        fail_setup("direct_actions() gives no actions, too many, or no initial state");
    if (CORE->action_label) {
        for (uint32_t a = 0; a < d.actions; a++) {
            char buf[LABEL_CAP];
            __msan_poison(buf, sizeof buf);
            snprintf(doing, sizeof doing, "action_label(%u)", a);
            CORE->action_label(settings, a, buf, sizeof buf);
            calls++;
            text_check(buf, sizeof buf, "the label");
        }
    }
    uint8_t *state = state_alloc(), *next = state_alloc();
    uint16_t *open = malloc(sizeof *open * d.actions);
    if (!open)
        fail_setup("out of memory");
    for (walk_at = 0; walk_at < opt.walks; walk_at++) {
        step_at = 0;
        /* cmc.h promises a zero state only to message-passing cores: init
         * must write every byte. */
        __msan_poison(state, CORE->state_size);
        call_init(state, 0, 1, walk_at % d.initial_states, &out);
        for (step_at = 1; step_at <= opt.steps; step_at++) {
            unsigned n = 0;
            for (uint32_t a = 0; a < d.actions; a++) {
                struct cmc_event ev;
                memset(&ev, 0, sizeof ev);
                ev.kind = CMC_EV_ACTION;
                ev.action.index = (uint16_t)a;
                memcpy(next, state, CORE->state_size);
                call_step(next, 0, 1, &ev, &out);
                if (!out.disabled)
                    open[n++] = (uint16_t)a;
            }
            if (n == 0)
                break;
            struct cmc_event ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = CMC_EV_ACTION;
            ev.action.index = open[pick(n)];
            call_step(state, 0, 1, &ev, &out);
        }
    }
    free(open);
}

/* ------------------------------------------------------------------------ */

static uint64_t number(const char *flag, const char *v, uint64_t max)
{
    char *end;
    unsigned long long n = strtoull(v ? v : "", &end, 0);
    if (!v || *end != 0 || n > max) {
        fprintf(stderr, "ccore_msan: %s needs a number up to %llu\n", flag, (unsigned long long)max);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--walks"))
            opt.walks = (uint32_t)number(f, v, 1000000);
        else if (!strcmp(f, "--steps"))
            opt.steps = (uint32_t)number(f, v, 100000);
        else if (!strcmp(f, "--seed"))
            opt.seed = number(f, v, UINT64_MAX);
        else if (!strcmp(f, "--nodes"))
            opt.nodes = (uint32_t)number(f, v, CMC_CORE_NODES_MAX);
        else if (!strcmp(f, "--clients"))
            opt.clients = (uint32_t)number(f, v, CMC_BUDGET_MAX);
        else if (!strcmp(f, "--crashes"))
            opt.crashes = (uint32_t)number(f, v, CMC_BUDGET_MAX);
        else if (!strcmp(f, "--drops"))
            opt.drops = (uint32_t)number(f, v, CMC_BUDGET_MAX);
        else {
            fprintf(stderr, "ccore_msan: unknown argument %s\n", f);
            return 2;
        }
    }
    seed_state = opt.seed;
    const struct cmc_core *core = CORE;
    if (core->abi != CMC_CORE_ABI)
        fail_setup("abi is not CMC_CORE_ABI");
    if (core->state_size == 0 || core->state_size > CMC_CORE_STATE_MAX || core->durable_size > core->state_size)
        fail_setup("state_size or durable_size out of range");
    if (core->settings_size > CMC_SETTINGS_MAX || !core->init || !core->step)
        fail_setup("settings_size out of range, or no init or step");
    if (opt.nodes == 0)
        fail_setup("--nodes must be at least 1");
    /* The settings: zero, then each key's default, little-endian; nothing
     * readable past settings_size. */
    memset(settings, 0, sizeof settings);
    for (uint32_t k = 0; k < core->settings_count; k++) {
        const struct cmc_setting *s = &core->settings[k];
        if (s->offset + s->width > core->settings_size || (s->width != 1 && s->width != 2 && s->width != 4 && s->width != 8))
            fail_setup("a setting lies outside settings_size, or has a width other than 1, 2, 4 or 8");
        for (uint32_t b = 0; b < s->width; b++)
            settings[s->offset + b] = (uint8_t)(s->value >> (8 * b));
    }
    __msan_poison(settings + core->settings_size, sizeof settings - core->settings_size);
    if (core->validate) {
        snprintf(doing, sizeof doing, "validate()");
        const char *why = core->validate(settings);
        calls++;
        if (why)
            fail_setup("validate() rejects the default settings");
    }
    const char *shape = core->direct_actions ? "direct actions" : "messages";
    if (core->direct_actions) {
        opt.nodes = 1;
        walk_actions();
    } else {
        walk_messages();
    }
    printf("%s (%s, %u node%s): %u walks of at most %u steps, seed %#llx: %llu calls "
           "(init %llu, deliver %llu, fire %llu, flushed %llu, apply_persist %llu, wake %llu, client %llu, "
           "restart %llu, reset %llu, action %llu), %u walks cut where the engine would stop; every byte initialised\n",
           core->name, shape, opt.nodes, opt.nodes == 1 ? "" : "s", opt.walks, opt.steps, (unsigned long long)opt.seed,
           (unsigned long long)calls, (unsigned long long)events[0], (unsigned long long)events[CMC_EV_DELIVER],
           (unsigned long long)events[CMC_EV_FIRE], (unsigned long long)events[CMC_EV_FLUSHED],
           (unsigned long long)events[CMC_EV_ACTION + 1], (unsigned long long)events[CMC_EV_WAKE],
           (unsigned long long)events[CMC_EV_CLIENT], (unsigned long long)events[CMC_EV_RESTART],
           (unsigned long long)events[CMC_EV_RESET], (unsigned long long)events[CMC_EV_ACTION], walks_cut);
    return 0;
}
