/*
 * abi_probe.c: C cores that misbehave on purpose, one way per value of
 * the setting `misbehave`, for tests/tests/ccores.rs: each must be an
 * error naming what it did, never a pass. `misbehave = 0` is a correct
 * core: a client request is persisted, and replied to once durable.
 *
 * State: byte 0 durable (requests on disk), byte 1 volatile (replies).
 * Also cores whose `struct cmc_core` is wrong, which loading refuses.
 */
#include "cmc.h"

enum {
    FINE = 0,
    WRITES_DURABLE = 1,    /* step changes the durable byte */
    WRITES_PAST_STATE = 2, /* step writes byte 2 of a 2-byte state */
    TOO_MANY_EFFECTS = 3,  /* 17 effects in one step */
    LONG_REPLY = 4,        /* a 33-byte reply */
    BAD_TIMER = 5,         /* arms timer 16 */
    NONDETERMINISTIC = 6,  /* reads a global it changes */
    PERSIST_VOLATILE = 7,  /* apply_persist changes the volatile byte */
    NOT_ENABLED = 8,       /* cmc_not_enabled() in a message-passing core */
};

static const struct cmc_setting probe_settings[] = {
    {.name = "misbehave", .doc = "which misbehaviour (0: none)", .offset = 0, .width = 1, .value = 0},
};

static int calls; /* only NONDETERMINISTIC touches it */

static void probe_init(const struct cmc_ctx *ctx, void *state, uint32_t variant, struct cmc_effects *out)
{
    (void)ctx, (void)state, (void)variant, (void)out;
}

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    uint8_t *s = state;
    uint8_t how = *(const uint8_t *)ctx->settings;
    static const uint8_t one = 1;
    if (ev->kind == CMC_EV_CLIENT) {
        cmc_persist(out, &one, 1);
        switch (how) {
        case WRITES_DURABLE: s[0] = 9; break;
        case WRITES_PAST_STATE: s[2] = 1; break;
        case TOO_MANY_EFFECTS:
            for (int i = 0; i < 16; i++)
                cmc_arm(out, 0);
            break;
        case LONG_REPLY: {
            uint8_t big[33] = {0};
            cmc_reply(out, big, sizeof big);
            break;
        }
        case BAD_TIMER: cmc_arm(out, 16); break;
        case NONDETERMINISTIC: s[1] = (uint8_t)(++calls & 1); break;
        case NOT_ENABLED: cmc_not_enabled(out); break;
        }
    } else if (ev->kind == CMC_EV_FLUSHED) {
        s[1]++;
        cmc_reply(out, &s[0], 1);
    }
}

static void probe_persist(const struct cmc_ctx *ctx, void *state, const uint8_t *record, uint32_t len)
{
    uint8_t *s = state;
    (void)len;
    s[0] += record[0];
    if (*(const uint8_t *)ctx->settings == PERSIST_VOLATILE)
        s[1] = 7;
}

/* Holds while every node has replied no more often than its disk counts:
 * true of the correct core. */
int replies_durable(const struct cmc_world *w)
{
    for (unsigned n = 0; n < w->nodes; n++) {
        const uint8_t *s = cmc_state(w, n);
        unsigned replies = 0;
        for (unsigned r = 0; r < w->replies; r++)
            replies += w->reply[r].node == n;
        if (replies > s[0])
            return 0;
    }
    return 1;
}

/* Fails once any node has replied twice: a violation the search finds. */
int at_most_one_reply(const struct cmc_world *w)
{
    for (unsigned n = 0; n < w->nodes; n++)
        if (((const uint8_t *)cmc_state(w, n))[1] > 1)
            return 0;
    return 1;
}

#define PROBE(var, ...)                                                                          \
    const struct cmc_core var = {.abi = CMC_CORE_ABI, .state_size = 2, .durable_size = 1,        \
                                 .settings_size = 1, .name = #var, .settings = probe_settings,   \
                                 .settings_count = 1, .init = probe_init, .step = probe_step,    \
                                 .apply_persist = probe_persist, __VA_ARGS__}

PROBE(abi_probe_core);
/* Wrong cores: `register` names what is wrong with each. */
PROBE(abi_probe_bad_abi, .abi = 99);
PROBE(abi_probe_durable_over_state, .durable_size = 3);
PROBE(abi_probe_no_step, .step = 0);
PROBE(abi_probe_state_too_large, .state_size = CMC_CORE_STATE_MAX + 1);
static const struct cmc_setting overlapping[] = {
    {.name = "a", .offset = 0, .width = 2, .value = 0},
    {.name = "b", .offset = 1, .width = 1, .value = 0},
};
PROBE(abi_probe_overlapping_settings, .settings_size = 2, .settings = overlapping, .settings_count = 2);
