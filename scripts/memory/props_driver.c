/*
 * props_driver: runs C invariants (a model file's `properties` shared
 * object) under MemorySanitizer, for the memory gate.
 *
 *   props_driver LIB.so VIEWS NAME...
 *
 * The checker calls invariants in its own process, which MSan cannot
 * instrument, so the gate builds each properties object with
 * -fsanitize=memory and calls its invariants from here instead, over VIEWS
 * views per invariant drawn from a fixed-seed generator. Every view is
 * fully initialised, as the checker's are (cmc::process::view), so an MSan
 * report can only come from the invariant reading memory of its own that
 * it never wrote. The views are shaped to reach the invariants' branches:
 * nodes mostly share one record length, bytes are mostly small, and
 * replies mostly start with a capital letter.
 *
 * Exit 0 when every call returned; MSan ends the process with its own exit
 * code at the first report.
 */
#include "cmc.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*invariant)(const struct cmc_view *);

static uint64_t seed = 0x9e3779b97f4a7c15u;

static uint32_t next(uint32_t bound)
{
    /* SplitMix64. */
    uint64_t z = (seed += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (uint32_t)(z % bound);
}

static uint8_t byte(void)
{
    return next(10) < 7 ? (uint8_t)next(4) : (uint8_t)next(256);
}

static void record(struct cmc_record *r, uint8_t len)
{
    r->len = len;
    for (unsigned i = 0; i < len; i++)
        r->bytes[i] = byte();
}

static void draw(struct cmc_view *v)
{
    memset(v, 0, sizeof *v);
    v->version = CMC_VIEW_VERSION;
    v->nodes = 1 + next(CMC_NODES_MAX);
    v->clock = next(4);
    uint8_t len = (uint8_t)next(13);
    for (uint32_t n = 0; n < v->nodes; n++) {
        struct cmc_node_view *nv = &v->node[n];
        nv->life = (uint8_t)(next(4) == 0 ? 1 + next(2) : CMC_LIVE);
        nv->status = nv->life == CMC_LIVE ? 0 : (int32_t)next(4);
        record(&nv->state, next(5) == 0 ? (uint8_t)next(CMC_STATE_MAX + 1) : len);
        nv->has_durable = (uint8_t)next(2);
        if (nv->has_durable)
            record(&nv->durable, next(5) == 0 ? (uint8_t)next(CMC_STATE_MAX + 1) : (uint8_t)next(len + 1));
    }
    v->replies = next(4) == 0 ? next(CMC_REPLIES_MAX + 1) : next(5);
    for (uint32_t i = 0; i < v->replies; i++) {
        struct cmc_reply *r = &v->reply[i];
        r->node = (uint8_t)next(v->nodes);
        r->len = (uint8_t)next(9);
        for (unsigned b = 0; b < r->len; b++)
            r->bytes[b] = byte();
        if (r->len > 0 && next(4) != 0)
            r->bytes[0] = (uint8_t)('A' + next(26));
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: props_driver LIB.so VIEWS NAME...\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "props_driver: %s\n", dlerror());
        return 2;
    }
    long views = atol(argv[2]);
    static struct cmc_view v;
    for (int a = 3; a < argc; a++) {
        invariant f = (invariant)(uintptr_t)dlsym(lib, argv[a]);
        if (f == NULL) {
            fprintf(stderr, "props_driver: no `%s` in %s\n", argv[a], argv[1]);
            return 2;
        }
        long held = 0;
        for (long i = 0; i < views; i++) {
            draw(&v);
            held += f(&v) != 0;
        }
        printf("%s: %ld views, held in %ld\n", argv[a], views, held);
    }
    return 0;
}
