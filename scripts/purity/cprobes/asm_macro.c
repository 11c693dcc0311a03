/* `asm` spelled by token pasting, so that no line of the file says `asm`:
 * the source rules read the preprocessed source, where it does. Expected:
 * [source:asm] at the line that uses the macro. */
#include "probe.h"

#define PASTE(a, b) a##b
#define BARRIER() PASTE(__as, m__) volatile("" ::: "memory")

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT) {
        BARRIER();
        s->count++;
    }
}

PROBE_CORE("purity-asm-macro");
