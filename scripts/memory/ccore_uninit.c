/*
 * ccore_uninit: the C core probe of the memory gate
 * (scripts/memory_teeth.sh), run by scripts/memory/ccore_msan.c exactly as
 * the gate runs the cores of examples/ccores: built as is, and once per
 * planted bug (-DBUG_<NAME>=1, found by the gate in the `#if BUG_` lines
 * below), each at -O1 and at -O0.
 *
 * A message-passing core over two or more nodes: a client request at a
 * node sends a note {tag, count, 0} to the next node; a delivery records
 * the note in the receiver's state. Only then does it go wrong:
 *
 *   (none)       not at all: the control, which must pass;
 *   BUG_BRANCH   on a delivery, it branches on a local that only some
 *                paths set (a decision left unset for a note from node 0);
 *   BUG_STATE    on a delivery, it copies a byte of a local it never wrote
 *                into its state;
 *   BUG_MESSAGE  on a client request, it sends a note one byte of which it
 *                never wrote;
 *   BUG_PADDING  on a delivery, it copies a local struct into its state
 *                whole, padding byte and all. At -O1 the compiler copies
 *                the fields alone and the state's padding keeps its zero;
 *                at -O0 the junk arrives. This is why the gate builds both.
 *   BUG_RENAME   its symmetry renaming (every node interchangeable)
 *                writes a byte of a local it never wrote into the state.
 *
 * MSan stops BUG_BRANCH by itself, inside the core; the others only the
 * driver's checks of the state and of the effects can see, since nothing
 * branches on the bytes. --det cannot see any of them: the junk is the
 * same on both runs. The locals are read through `volatile` (and the
 * branch through an out-of-line function), so that the compiler cannot
 * fold a never-written value to a constant of its choosing, as it may.
 */
#include "cmc.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef BUG_BRANCH
#define BUG_BRANCH 0
#endif
#ifndef BUG_STATE
#define BUG_STATE 0
#endif
#ifndef BUG_MESSAGE
#define BUG_MESSAGE 0
#endif
#ifndef BUG_RENAME
#define BUG_RENAME 0
#endif
#ifndef BUG_PADDING
#define BUG_PADDING 0
#endif

#define NOTE 7

/* A note as the state keeps it: one byte of padding after `tag`. */
struct entry {
    uint8_t tag;
    uint16_t count;
};

struct probe_state {
    struct entry last;   /* the last note delivered; its padding byte zero */
    uint8_t notes;       /* notes delivered */
    uint8_t sent;        /* notes sent */
    uint8_t flag;        /* what BUG_BRANCH decides */
    uint8_t reserved;
};

_Static_assert(sizeof(struct entry) == 4, "struct entry: a padding byte at 1");
_Static_assert(sizeof(struct probe_state) == 8, "struct probe_state: 8 bytes");

static void probe_init(const struct cmc_ctx *ctx, void *state, uint32_t variant, struct cmc_effects *out)
{
    (void)ctx;
    (void)variant;
    (void)out;
    memset(state, 0, sizeof(struct probe_state));
}

#if BUG_BRANCH
/* Out of line, and through a volatile pointer: the value is loaded, and
 * the caller branches on what it returns. */
__attribute__((noinline)) static int set(const volatile uint8_t *p)
{
    return p[0] != 0;
}
#endif

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    if (ev->kind == CMC_EV_CLIENT) {
        s->sent++;
        volatile uint8_t note[3];
        note[0] = NOTE;
        note[1] = s->sent;
#if BUG_MESSAGE
        /* note[2] never written */
#else
        note[2] = 0;
#endif
        uint8_t copy[3] = {note[0], note[1], note[2]};
        cmc_send(out, (ctx->node + 1u) % ctx->nodes, copy, sizeof copy);
        return;
    }
    if (ev->kind != CMC_EV_DELIVER || ev->deliver.len < 3)
        return;
    const uint8_t *m = ev->deliver.msg;
    s->notes++;
#if BUG_BRANCH
    volatile uint8_t decision[1];
    if (ev->deliver.from != 0)
        decision[0] = 1;
    if (set(decision))
        s->flag = 1;
#endif
#if BUG_STATE
    volatile uint8_t junk[2];
    junk[0] = m[2];
    s->reserved = junk[1];
#endif
#if BUG_PADDING
    struct entry e;
    e.tag = m[0];
    e.count = m[1];
    memcpy(&s->last, &e, sizeof e);
#else
    memset(&s->last, 0, sizeof s->last);
    s->last.tag = m[0];
    s->last.count = m[1];
#endif
}

/* Symmetry: every node alike; no state holds a node number, so the
 * renaming changes nothing, but for BUG_RENAME. */
static uint32_t probe_interchangeable(const void *settings, uint32_t nodes)
{
    (void)settings;
    return (1u << nodes) - 1;
}

static void probe_rename(const void *settings, const uint8_t *to, void *state)
{
    struct probe_state *s = state;
    (void)settings, (void)to;
#if BUG_RENAME
    volatile uint8_t renamed[2];
    s->reserved = renamed[1];
#else
    (void)s;
#endif
}

const struct cmc_core ccore_uninit = {
    .abi = CMC_CORE_ABI,
    .state_size = sizeof(struct probe_state),
    .durable_size = 0,
    .settings_size = 0,
    .name = "memory-probe-c",
    .init = probe_init,
    .step = probe_step,
    .interchangeable = probe_interchangeable,
    .rename_state = probe_rename,
};

CMC_EXPORT_CORE(ccore_uninit);
