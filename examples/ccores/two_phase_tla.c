/*
 * two_phase_tla: `TwoPhase` from the TLA+ examples (Lamport's two-phase
 * commit, `TwoPhase.tla`), as a direct-actions C core named
 * `c-two-phase-tla`. It is a port of examples/src/two_phase_tla.rs, state
 * byte for byte, actions in the same order, with the same labels, so that
 * both give TLC's figures.
 *
 * The world is the specification's one state; the actions are `TPNext`'s
 * disjuncts in TLC's order: TMCommit, TMAbort, then for each resource
 * manager r: TMRcvPrepared(r), RMPrepare(r), RMChooseToAbort(r),
 * RMRcvCommitMsg(r), RMRcvAbortMsg(r). `msgs` only grows, and
 * RMRcvCommitMsg/RMRcvAbortMsg stay enabled (and count as generated) after
 * they have taken effect, as in TLC. TLC's figures (one worker,
 * `-deadlock`): N=3: 288 distinct, 1,146 generated, depth 11; N=7: 296,448,
 * 2,744,706, 23; N=8: 1,745,408, 18,507,778, 26.
 *
 * State, 13 bytes, none durable: rm_state[8] (one of RM_* per resource
 * manager, unused ones 0), tm_state (one of TM_*), then the sets of
 * resource managers as bitmaps, bit r for r: tm_prepared, msgs_prepared;
 * and msgs_commit, msgs_abort (0 or 1). Settings, 1 byte: rms, N.
 *
 * Properties, C predicates over `struct cmc_world` (cmc.h):
 *   tp_type_ok: TPTypeOK, every variable holds a value of its type, and
 *     the bytes past N are zero.
 *   tc_consistent: TCConsistent from TCommit, no resource manager has
 *     committed while another has aborted.
 *
 * Build and run: see the Makefile beside this file, and two-phase-tla.toml.
 */
#include "cmc.h"

#include <stddef.h>
#include <stdint.h>

/* Resource managers the state has room for. */
#define RMS_MAX 8

/* rmState[r]. */
#define RM_WORKING 0
#define RM_PREPARED 1
#define RM_COMMITTED 2
#define RM_ABORTED 3

/* tmState. */
#define TM_INIT 0
#define TM_COMMITTED 1
#define TM_ABORTED 2

/* The actions: two for the transaction manager, then PER_RM for each
 * resource manager, in this order. */
#define TM_COMMIT 0
#define TM_ABORT 1
#define PER_RM 5
#define TM_RCV_PREPARED 0
#define RM_PREPARE 1
#define RM_CHOOSE_TO_ABORT 2
#define RM_RCV_COMMIT_MSG 3
#define RM_RCV_ABORT_MSG 4

struct two_phase_tla_state {
    uint8_t rm_state[RMS_MAX];  /* rmState */
    uint8_t tm_state;           /* tmState */
    uint8_t tm_prepared;        /* tmPrepared, by bit r */
    uint8_t msgs_prepared;      /* [type |-> "Prepared", rm |-> r] \in msgs, by bit r */
    uint8_t msgs_commit;        /* [type |-> "Commit"] \in msgs */
    uint8_t msgs_abort;         /* [type |-> "Abort"] \in msgs */
};

_Static_assert(sizeof(struct two_phase_tla_state) == 13, "struct two_phase_tla_state: 13 bytes, no padding");

struct two_phase_tla_settings {
    uint8_t rms;  /* N, 1 to RMS_MAX */
};

_Static_assert(sizeof(struct two_phase_tla_settings) == 1, "struct two_phase_tla_settings: 1 byte");

static const struct cmc_setting two_phase_tla_keys[] = {
    {
        .name = "rms",
        .doc = "Number of resource managers, N (1 to 8).",
        .offset = offsetof(struct two_phase_tla_settings, rms),
        .width = 1,
        .value = 3,
    },
};

/* Every resource manager's bit. */
static uint8_t all_rms(unsigned rms)
{
    return (uint8_t)((1u << rms) - 1);
}

static const char *two_phase_tla_validate(const void *settings)
{
    const struct two_phase_tla_settings *c = settings;
    if (c->rms == 0 || c->rms > RMS_MAX)
        return "setting `rms` out of range (1 to 8)";
    return 0;
}

static void two_phase_tla_direct_actions(const void *settings, struct cmc_direct *out)
{
    const struct two_phase_tla_settings *c = settings;
    out->actions = 2 + PER_RM * (uint32_t)c->rms;
    out->initial_states = 1;
}

/* TPInit: every resource manager working, the transaction manager in
 * init, nothing prepared or sent. */
static void two_phase_tla_init(const struct cmc_ctx *ctx, void *state, uint32_t variant, struct cmc_effects *out)
{
    (void)ctx;
    (void)variant;
    (void)out;
    struct two_phase_tla_state *s = state;
    for (unsigned r = 0; r < RMS_MAX; r++)
        s->rm_state[r] = RM_WORKING;
    s->tm_state = TM_INIT;
    s->tm_prepared = 0;
    s->msgs_prepared = 0;
    s->msgs_commit = 0;
    s->msgs_abort = 0;
}

/* Each action computes its enabling condition first and writes the state
 * only when it holds: a disabled action leaves the state as it was. */
static void two_phase_tla_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    const struct two_phase_tla_settings *c = ctx->settings;
    struct two_phase_tla_state *s = state;
    if (ev->kind != CMC_EV_ACTION || ev->action.index >= 2 + PER_RM * (unsigned)c->rms) {
        cmc_not_enabled(out);
        return;
    }
    unsigned index = ev->action.index;
    if (index == TM_COMMIT) {
        if (!(s->tm_state == TM_INIT && s->tm_prepared == all_rms(c->rms))) {
            cmc_not_enabled(out);
            return;
        }
        s->tm_state = TM_COMMITTED;
        s->msgs_commit = 1;
        return;
    }
    if (index == TM_ABORT) {
        if (!(s->tm_state == TM_INIT)) {
            cmc_not_enabled(out);
            return;
        }
        s->tm_state = TM_ABORTED;
        s->msgs_abort = 1;
        return;
    }
    unsigned r = (index - 2) / PER_RM;
    uint8_t bit = (uint8_t)(1u << r);
    switch ((index - 2) % PER_RM) {
    case TM_RCV_PREPARED:
        if (!(s->tm_state == TM_INIT && (s->msgs_prepared & bit) != 0))
            break;
        s->tm_prepared |= bit;
        return;
    case RM_PREPARE:
        if (!(s->rm_state[r] == RM_WORKING))
            break;
        s->rm_state[r] = RM_PREPARED;
        s->msgs_prepared |= bit;
        return;
    case RM_CHOOSE_TO_ABORT:
        if (!(s->rm_state[r] == RM_WORKING))
            break;
        s->rm_state[r] = RM_ABORTED;
        return;
    case RM_RCV_COMMIT_MSG:
        if (!(s->msgs_commit != 0))
            break;
        s->rm_state[r] = RM_COMMITTED;
        return;
    default: /* RM_RCV_ABORT_MSG */
        if (!(s->msgs_abort != 0))
            break;
        s->rm_state[r] = RM_ABORTED;
        return;
    }
    cmc_not_enabled(out);
}

/* Appends `text` at `at` in `buf`, as much as fits before the NUL. */
static uint32_t label_put(char *buf, uint32_t cap, uint32_t at, const char *text)
{
    for (; *text != 0 && at + 1 < cap; text++)
        buf[at++] = *text;
    return at;
}

/* Appends `n` in decimal. */
static uint32_t label_put_number(char *buf, uint32_t cap, uint32_t at, uint32_t n)
{
    char digits[11];
    unsigned len = 0;
    do {
        digits[len++] = (char)('0' + n % 10);
        n /= 10;
    } while (n != 0);
    while (len > 0 && at + 1 < cap)
        buf[at++] = digits[--len];
    return at;
}

/* `TMCommit`, `TMAbort`, or `RMPrepare(r2)`: the Rust core's labels,
 * resource managers numbered from 1. */
static void two_phase_tla_action_label(const void *settings, uint32_t index, char *buf, uint32_t cap)
{
    static const char *const names[PER_RM] = {
        "TMRcvPrepared", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg",
    };
    (void)settings;
    if (cap == 0)
        return;
    uint32_t at = 0;
    if (index == TM_COMMIT) {
        at = label_put(buf, cap, at, "TMCommit");
    } else if (index == TM_ABORT) {
        at = label_put(buf, cap, at, "TMAbort");
    } else {
        at = label_put(buf, cap, at, names[(index - 2) % PER_RM]);
        at = label_put(buf, cap, at, "(r");
        at = label_put_number(buf, cap, at, (index - 2) / PER_RM + 1);
        at = label_put(buf, cap, at, ")");
    }
    buf[at] = 0;
}

const struct cmc_core two_phase_tla_core = {
    .abi = CMC_CORE_ABI,
    .state_size = sizeof(struct two_phase_tla_state),
    .durable_size = 0,
    .settings_size = sizeof(struct two_phase_tla_settings),
    .name = "c-two-phase-tla",
    .settings = two_phase_tla_keys,
    .settings_count = sizeof two_phase_tla_keys / sizeof two_phase_tla_keys[0],
    .reserved = 0,
    .init = two_phase_tla_init,
    .step = two_phase_tla_step,
    .apply_persist = 0,
    .direct_actions = two_phase_tla_direct_actions,
    .validate = two_phase_tla_validate,
    .action_label = two_phase_tla_action_label,
};

/* TPTypeOK: each resource manager's state is one of RM_*, the bytes past
 * N are zero, the transaction manager's state is one of TM_*, and the sets
 * name resource managers below N only. */
int tp_type_ok(const struct cmc_world *w)
{
    const struct two_phase_tla_settings *c = w->settings;
    const struct two_phase_tla_state *s = cmc_state(w, 0);
    uint8_t all = all_rms(c->rms);
    for (unsigned r = 0; r < RMS_MAX; r++) {
        if (r < c->rms && s->rm_state[r] > RM_ABORTED)
            return 0;
        if (r >= c->rms && s->rm_state[r] != 0)
            return 0;
    }
    if (s->tm_state > TM_ABORTED)
        return 0;
    if ((s->tm_prepared & (uint8_t)~all) != 0)
        return 0;
    if ((s->msgs_prepared & (uint8_t)~all) != 0)
        return 0;
    return 1;
}

/* TCConsistent: no resource manager has committed while another has
 * aborted. */
int tc_consistent(const struct cmc_world *w)
{
    const struct two_phase_tla_settings *c = w->settings;
    const struct two_phase_tla_state *s = cmc_state(w, 0);
    int committed = 0;
    int aborted = 0;
    for (unsigned r = 0; r < c->rms && r < RMS_MAX; r++) {
        committed |= s->rm_state[r] == RM_COMMITTED;
        aborted |= s->rm_state[r] == RM_ABORTED;
    }
    return !(committed && aborted);
}

CMC_EXPORT_CORE(two_phase_tla_core);
