/*
 * two_phase: two-phase commit over messages, as the message-passing C core
 * `c-two-phase`. It is a port of examples/src/two_phase.rs, byte for byte
 * in its state, messages, persist records, timers and behaviour, so that
 * both give the same worlds; the Rust core's planted-bug settings are
 * compile-time switches here (below).
 *
 * Protocol. Node 0 is the coordinator, nodes 1.. are participants; one
 * transaction starts at init, when the coordinator sends PREPARE to every
 * participant and arms its timeout. A participant votes yes (or no, if it
 * is the setting `no_voter`), makes its vote durable and only then sends
 * it; a participant that votes no aborts at once. The coordinator decides
 * commit when every participant voted yes, abort on a no vote or when its
 * timer fires first, persists the decision and sends it only once it is
 * durable. A participant persists the decision it receives. After a crash
 * the coordinator recovers its decision from its durable bytes and sends it
 * again, or, with none on disk, presumes abort; when a participant crashed
 * (a reset from it) the coordinator sends it again whatever it is missing:
 * the PREPARE or the decision.
 *
 * State, 6 bytes, the first 2 durable: {vote, decision, phase, votes,
 * want_vote, want_decision} (struct two_phase_state). A persist record is
 * the whole durable image {vote, decision}. Messages: {PREPARE},
 * {VOTE, vote}, {DECISION, decision}. Timer 0 is the coordinator's
 * timeout. Settings, 1 byte: no_voter.
 *
 * Properties, C predicates over `struct cmc_world` (cmc.h):
 *   atomicity (always): no node has a durable commit while another has a
 *     durable abort.
 *   commit_needs_all_yes (always): a durable commit anywhere means every
 *     participant has a durable yes vote.
 *   all_decided (eventually): every participant reaches a durable
 *     decision.
 *   commit_reachable (sometimes, when every participant votes yes): the
 *     protocol can commit at all.
 *
 * Planted bugs, each a build of its own (-DBUG_<NAME>=1, the Makefile):
 *   BUG_COMMIT_ON_TIMEOUT: the coordinator commits instead of aborting
 *     when its timer fires; BFS finds a commit with votes missing
 *     (commit_needs_all_yes).
 *   BUG_NO_PERSIST_DECISION: the coordinator sends its decision without
 *     persisting it, so after a crash it presumes abort while a participant
 *     has already committed (atomicity).
 *
 * Build and run: see the Makefile beside this file, and two-phase*.toml.
 */
#include "cmc.h"

#include <stddef.h>
#include <stdint.h>

#ifndef BUG_COMMIT_ON_TIMEOUT
#define BUG_COMMIT_ON_TIMEOUT 0
#endif
#ifndef BUG_NO_PERSIST_DECISION
#define BUG_NO_PERSIST_DECISION 0
#endif

/* A build with a bug planted says so in its name, which reports,
 * counterexample files and the planted-bug gate read. */
#if BUG_COMMIT_ON_TIMEOUT && BUG_NO_PERSIST_DECISION
#define CORE_NAME "c-two-phase-BUG_COMMIT_ON_TIMEOUT-BUG_NO_PERSIST_DECISION"
#elif BUG_COMMIT_ON_TIMEOUT
#define CORE_NAME "c-two-phase-BUG_COMMIT_ON_TIMEOUT"
#elif BUG_NO_PERSIST_DECISION
#define CORE_NAME "c-two-phase-BUG_NO_PERSIST_DECISION"
#else
#define CORE_NAME "c-two-phase"
#endif

/* A participant's vote. */
#define VOTE_NONE 0
#define VOTE_YES 1
#define VOTE_NO 2

/* A node's decision. */
#define DECISION_NONE 0
#define DECISION_COMMIT 1
#define DECISION_ABORT 2

/* The coordinator's phase (volatile; zero after a crash until restart). */
#define PHASE_NONE 0      /* participant, or a coordinator not yet started */
#define PHASE_WAITING 1   /* prepares sent, collecting votes, timer armed */
#define PHASE_DECIDING 2  /* decision queued for disk, not yet durable */
#define PHASE_DONE 3      /* decision durable and sent */

/* Message tags: {MSG_PREPARE}, {MSG_VOTE, vote}, {MSG_DECISION, decision}. */
#define MSG_PREPARE 1
#define MSG_VOTE 2
#define MSG_DECISION 3

/* The coordinator's timeout timer. */
#define TIMEOUT 0

/* The coordinator is node 0. */
#define COORDINATOR 0

/* One node's state. The first DURABLE bytes are durable. */
struct two_phase_state {
    uint8_t vote;           /* durable; participant: its vote on disk */
    uint8_t decision;       /* durable; the decision on disk */
    uint8_t phase;          /* coordinator: PHASE_* */
    uint8_t votes;          /* coordinator: participants whose yes vote arrived, by bit */
    uint8_t want_vote;      /* participant: the vote it has written (durable or pending) */
    uint8_t want_decision;  /* the decision it has taken (durable, pending, or only sent
                               under BUG_NO_PERSIST_DECISION) */
};

#define DURABLE 2

_Static_assert(sizeof(struct two_phase_state) == 6, "struct two_phase_state: 6 bytes, no padding");
_Static_assert(offsetof(struct two_phase_state, phase) == DURABLE, "the durable bytes lead");

struct two_phase_settings {
    uint8_t no_voter;  /* the participant that votes no; 0: none */
};

_Static_assert(sizeof(struct two_phase_settings) == 1, "struct two_phase_settings: 1 byte");

static const struct cmc_setting two_phase_keys[] = {
    {
        .name = "no_voter",
        .doc = "The participant that votes no (0: every participant votes yes).",
        .offset = offsetof(struct two_phase_settings, no_voter),
        .width = 1,
        .value = 0,
    },
};

static const char *two_phase_validate(const void *settings)
{
    const struct two_phase_settings *c = settings;
    if (c->no_voter >= CMC_CORE_NODES_MAX)
        return "setting `no_voter` out of range (a participant, 1 to 7, or 0)";
    return 0;
}

/* Every participant's bit. */
static uint8_t participants(const struct cmc_ctx *ctx)
{
    return (uint8_t)(((1u << ctx->nodes) - 1) & ~1u);
}

static void send_all(const struct cmc_ctx *ctx, struct cmc_effects *out, const uint8_t *msg, unsigned len)
{
    for (unsigned p = 1; p < ctx->nodes; p++)
        cmc_send(out, p, msg, len);
}

static void send_decision(struct cmc_effects *out, unsigned to, uint8_t d)
{
    const uint8_t msg[2] = {MSG_DECISION, d};
    cmc_send(out, to, msg, sizeof msg);
}

static void send_decision_all(const struct cmc_ctx *ctx, struct cmc_effects *out, uint8_t d)
{
    const uint8_t msg[2] = {MSG_DECISION, d};
    send_all(ctx, out, msg, sizeof msg);
}

/* Takes decision `d`: durable first, sent once FLUSHED says it is. */
static void decide(const struct cmc_ctx *ctx, struct two_phase_state *s, uint8_t d, struct cmc_effects *out)
{
    s->want_decision = d;
    cmc_cancel(out, TIMEOUT);
#if BUG_NO_PERSIST_DECISION
    /* Sent before it is on disk, and never put there. */
    s->phase = PHASE_DONE;
    send_decision_all(ctx, out, d);
#else
    (void)ctx;
    const uint8_t record[2] = {VOTE_NONE, d};
    s->phase = PHASE_DECIDING;
    cmc_persist(out, record, sizeof record);
#endif
}

static void coordinator(const struct cmc_ctx *ctx, struct two_phase_state *s, const struct cmc_event *ev, struct cmc_effects *out)
{
    switch (ev->kind) {
    case CMC_EV_DELIVER: {
        if (ev->deliver.len != 2 || ev->deliver.msg[0] != MSG_VOTE)
            return;
        uint8_t v = ev->deliver.msg[1];
        if (s->phase == PHASE_WAITING && v == VOTE_YES) {
            s->votes |= (uint8_t)(1u << ev->deliver.from);
            if (s->votes == participants(ctx))
                decide(ctx, s, DECISION_COMMIT, out);
        } else if (s->phase == PHASE_WAITING) {
            decide(ctx, s, DECISION_ABORT, out);
        } else if (s->phase == PHASE_DONE) {
            /* A late or repeated vote: the participant is missing the
             * decision. */
            send_decision(out, ev->deliver.from, s->want_decision);
        }
        return;
    }
    case CMC_EV_FIRE:
        if (ev->fire.timer == TIMEOUT && s->phase == PHASE_WAITING) {
#if BUG_COMMIT_ON_TIMEOUT
            decide(ctx, s, DECISION_COMMIT, out);
#else
            decide(ctx, s, DECISION_ABORT, out);
#endif
        }
        return;
    case CMC_EV_FLUSHED:
        if (s->phase == PHASE_DECIDING) {
            s->phase = PHASE_DONE;
            send_decision_all(ctx, out, s->want_decision);
        }
        return;
    case CMC_EV_RESTART:
        /* Volatile bytes are zero; the disk says whether we decided. */
        if (s->decision != DECISION_NONE) {
            s->want_decision = s->decision;
            s->phase = PHASE_DONE;
            send_decision_all(ctx, out, s->decision);
        } else {
            /* Presumed abort: the votes died with the crash. */
            decide(ctx, s, DECISION_ABORT, out);
        }
        return;
    case CMC_EV_RESET: {
        /* The participant crashed: send again what it may have lost. */
        uint8_t peer = ev->reset.peer;
        if (s->phase == PHASE_WAITING && (s->votes & (1u << peer)) == 0) {
            const uint8_t prepare[1] = {MSG_PREPARE};
            cmc_send(out, peer, prepare, sizeof prepare);
        } else if (s->phase == PHASE_DONE) {
            send_decision(out, peer, s->want_decision);
        }
        return;
    }
    default:
        return;
    }
}

/* Sends the vote, but only once everything written so far is on disk, and
 * only if it still matters: a yes voter that has decided has nothing to
 * say. */
static void send_vote(const struct two_phase_state *s, struct cmc_effects *out)
{
    int on_disk = s->vote == s->want_vote && s->decision == s->want_decision;
    int undecided_yes = s->vote == VOTE_YES && s->decision == DECISION_NONE;
    if (on_disk && (undecided_yes || s->vote == VOTE_NO)) {
        const uint8_t msg[2] = {MSG_VOTE, s->vote};
        cmc_send(out, COORDINATOR, msg, sizeof msg);
    }
}

static void participant(const struct cmc_ctx *ctx, struct two_phase_state *s, const struct cmc_event *ev, struct cmc_effects *out)
{
    const struct two_phase_settings *c = ctx->settings;
    switch (ev->kind) {
    case CMC_EV_DELIVER:
        if (ev->deliver.len == 1 && ev->deliver.msg[0] == MSG_PREPARE) {
            if (s->want_vote == VOTE_NONE && s->want_decision == DECISION_NONE) {
                s->want_vote = ctx->node == c->no_voter ? VOTE_NO : VOTE_YES;
                if (s->want_vote == VOTE_NO)
                    s->want_decision = DECISION_ABORT;
                const uint8_t record[2] = {s->want_vote, s->want_decision};
                cmc_persist(out, record, sizeof record);
            } else {
                /* A repeated prepare (the coordinator saw us crash). */
                send_vote(s, out);
            }
        } else if (ev->deliver.len == 2 && ev->deliver.msg[0] == MSG_DECISION
                   && s->want_decision == DECISION_NONE) {
            /* The first decision is final; a repeated one changes
             * nothing. */
            s->want_decision = ev->deliver.msg[1];
            const uint8_t record[2] = {s->want_vote, s->want_decision};
            cmc_persist(out, record, sizeof record);
        }
        return;
    case CMC_EV_FLUSHED:
        send_vote(s, out);
        return;
    case CMC_EV_RESTART:
        s->want_vote = s->vote;
        s->want_decision = s->decision;
        return;
    default:
        return;
    }
}

/* The coordinator starts the transaction; a participant waits. The engine
 * hands a zeroed state; the values are written out for the reader. */
static void two_phase_init(const struct cmc_ctx *ctx, void *state, uint32_t variant, struct cmc_effects *out)
{
    (void)variant;
    struct two_phase_state *s = state;
    s->vote = VOTE_NONE;
    s->decision = DECISION_NONE;
    s->phase = PHASE_NONE;
    s->votes = 0;
    s->want_vote = VOTE_NONE;
    s->want_decision = DECISION_NONE;
    if (ctx->node != COORDINATOR)
        return;
    const uint8_t prepare[1] = {MSG_PREPARE};
    s->phase = PHASE_WAITING;
    send_all(ctx, out, prepare, sizeof prepare);
    cmc_arm(out, TIMEOUT);
}

static void two_phase_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    if (ctx->node == COORDINATOR)
        coordinator(ctx, state, ev, out);
    else
        participant(ctx, state, ev, out);
}

/* A record is the whole durable image {vote, decision}. */
static void two_phase_apply_persist(const struct cmc_ctx *ctx, void *state, const uint8_t *record, uint32_t len)
{
    (void)ctx;
    struct two_phase_state *s = state;
    if (len != 2)
        return;
    s->vote = record[0];
    s->decision = record[1];
}

/* Appends `text` to `buf` at `*at`, as much as fits before the NUL (no
 * snprintf: a core calls nothing but mem*). */
static void put(char *buf, uint32_t cap, uint32_t *at, const char *text)
{
    for (; *text != 0 && *at + 1 < cap; text++)
        buf[(*at)++] = *text;
    buf[*at] = 0;
}

static const char *vote_name(uint8_t v)
{
    return v == VOTE_NONE ? "-" : v == VOTE_YES ? "yes" : v == VOTE_NO ? "no" : "?";
}

static const char *decision_name(uint8_t d)
{
    return d == DECISION_NONE ? "-" : d == DECISION_COMMIT ? "commit" : d == DECISION_ABORT ? "abort" : "?";
}

/* As the Rust core shows its state: `disk(..)` is durable; a coordinator
 * shows its phase, the yes votes it has and its decision; a participant
 * what it is writing when that differs from its disk. */
static void two_phase_show_state(const void *settings, const void *state, char *buf, uint32_t cap)
{
    const struct two_phase_state *s = state;
    uint32_t at = 0;
    (void)settings;
    if (s->phase != PHASE_NONE) {
        static const char *const phases[] = {"?", "waiting", "deciding", "done"};
        put(buf, cap, &at, "disk(decision ");
        put(buf, cap, &at, decision_name(s->decision));
        put(buf, cap, &at, ") ");
        put(buf, cap, &at, s->phase <= PHASE_DONE ? phases[s->phase] : "?");
        put(buf, cap, &at, ", yes votes from [");
        const char *sep = "";
        for (unsigned i = 0; i < 8; i++) {
            if (s->votes & (1u << i)) {
                const char digit[2] = {(char)('0' + i), 0};
                put(buf, cap, &at, sep);
                put(buf, cap, &at, digit);
                sep = ", ";
            }
        }
        put(buf, cap, &at, "], decided ");
        put(buf, cap, &at, decision_name(s->want_decision));
        return;
    }
    put(buf, cap, &at, "disk(vote ");
    put(buf, cap, &at, vote_name(s->vote));
    put(buf, cap, &at, ", decision ");
    put(buf, cap, &at, decision_name(s->decision));
    put(buf, cap, &at, ")");
    if (s->want_vote != s->vote || s->want_decision != s->decision) {
        put(buf, cap, &at, " writing(vote ");
        put(buf, cap, &at, vote_name(s->want_vote));
        put(buf, cap, &at, ", decision ");
        put(buf, cap, &at, decision_name(s->want_decision));
        put(buf, cap, &at, ")");
    }
}

/* Symmetry: the participants that vote yes are alike (as the Rust core's
 * `interchangeable`). */
static uint32_t two_phase_interchangeable(const void *settings, uint32_t nodes)
{
    const struct two_phase_settings *c = settings;
    uint32_t all = ((1u << nodes) - 1) & ~1u;
    return all & ~(1u << c->no_voter);
}

/* Only the coordinator's bitmap of yes votes names nodes; messages and
 * records do not. */
static void two_phase_rename_state(const void *settings, const uint8_t *to, void *state)
{
    struct two_phase_state *s = state;
    uint8_t votes = 0;
    (void)settings;
    for (unsigned n = 0; n < CMC_CORE_NODES_MAX; n++)
        if (s->votes & (1u << n))
            votes |= (uint8_t)(1u << to[n]);
    s->votes = votes;
}

const struct cmc_core two_phase_core = {
    .abi = CMC_CORE_ABI,
    .state_size = sizeof(struct two_phase_state),
    .durable_size = DURABLE,
    .settings_size = sizeof(struct two_phase_settings),
    .name = CORE_NAME,
    .settings = two_phase_keys,
    .settings_count = sizeof two_phase_keys / sizeof two_phase_keys[0],
    .reserved = 0,
    .init = two_phase_init,
    .step = two_phase_step,
    .apply_persist = two_phase_apply_persist,
    .direct_actions = 0,
    .validate = two_phase_validate,
    .action_label = 0,
    .show_state = two_phase_show_state,
    .show_payload = 0,
    .interchangeable = two_phase_interchangeable,
    .rename_state = two_phase_rename_state,
    .rename_payload = 0,
};

static const struct two_phase_state *node_state(const struct cmc_world *w, unsigned node)
{
    return cmc_state(w, node);
}

static int any_decided(const struct cmc_world *w, uint8_t d)
{
    for (unsigned n = 0; n < w->nodes; n++)
        if (node_state(w, n)->decision == d)
            return 1;
    return 0;
}

/* No node has a durable commit while another has a durable abort. */
int atomicity(const struct cmc_world *w)
{
    return !(any_decided(w, DECISION_COMMIT) && any_decided(w, DECISION_ABORT));
}

/* A durable commit anywhere means every participant has a durable yes
 * vote. */
int commit_needs_all_yes(const struct cmc_world *w)
{
    if (!any_decided(w, DECISION_COMMIT))
        return 1;
    for (unsigned p = 1; p < w->nodes; p++)
        if (node_state(w, p)->vote != VOTE_YES)
            return 0;
    return 1;
}

/* Eventually: every participant has a durable decision. */
int all_decided(const struct cmc_world *w)
{
    for (unsigned p = 1; p < w->nodes; p++)
        if (node_state(w, p)->decision == DECISION_NONE)
            return 0;
    return 1;
}

/* Sometimes: some node has a durable commit. The Rust model asks it only
 * when every participant votes yes (no_voter 0). */
int commit_reachable(const struct cmc_world *w)
{
    return any_decided(w, DECISION_COMMIT);
}

CMC_EXPORT_CORE(two_phase_core);
