/*
 * probe.h: what every purity probe core shares (scripts/purity/cprobes,
 * scripts/purity_teeth.sh). A probe is a tiny message-passing core: a
 * client request at a node sends a one-byte count to the next node, and a
 * delivery bumps the count and replies with it. Each probe file defines
 * `probe_step` (the one place it differs, by one forbidden thing) and ends
 * with PROBE_CORE(name); control.c, the clean one, must pass the gate.
 *
 * This header is a file of the probes' own, not cmc.h: the gate scans it
 * as it scans them, so it must stay clean.
 */
#ifndef PURITY_PROBE_H
#define PURITY_PROBE_H

#include "cmc.h"

#include <stdint.h>

struct probe_state {
    uint8_t count;  /* requests and deliveries seen */
    uint8_t last;   /* the last byte delivered */
};

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out);

static void probe_init(const struct cmc_ctx *ctx, void *state, uint32_t variant, struct cmc_effects *out)
{
    (void)ctx;
    (void)variant;
    (void)out;
    struct probe_state *s = state;
    s->count = 0;
    s->last = 0;
}

/* The probe's core, exported as `cmc_core` (cmc.h). */
#define PROBE_CORE(NAME)                                                          \
    const struct cmc_core probe_core = {                                          \
        .abi = CMC_CORE_ABI,                                                      \
        .state_size = sizeof(struct probe_state),                                 \
        .durable_size = 0,                                                        \
        .settings_size = 0,                                                       \
        .name = NAME,                                                             \
        .init = probe_init,                                                       \
        .step = probe_step,                                                       \
    };                                                                            \
    extern const struct cmc_core cmc_core __attribute__((weak, alias("probe_core")))

#endif
