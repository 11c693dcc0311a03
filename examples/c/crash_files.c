/*
 * crash_files: the regression programs of issue 27, item 5 ("Crash states
 * of files"): files written without fsync, and what a crash of the
 * machine leaves of them on ext4 (cmc/tests/process_crash_states.rs, and
 * natively on a real ext4 image there).
 *
 * Usage: crash_files NODE MODE DIR, DIR the data directory. At every start
 * the program checks what its mode relies on and aborts if it does not
 * hold (a violation of no_node_killed_by_a_signal); on a first start it
 * makes its changes; then it reports {value: present, length, first two
 * bytes; data: present, length, first byte} on fd 3 and pauses.
 *
 *   rename    writes "v1" to DIR/tmp and renames it DIR/value, a new
 *             name, with no fsync; relies on DIR/value, once it is there,
 *             holding "v1" whole. On ext4 the rename can reach the disk
 *             before the file's data: an empty file (or zeros) under the
 *             final name.
 *   twofiles  makes DIR/data and DIR/value durable and empty, then writes
 *             "D" to data and "C" to value, with no fsync; relies on
 *             value's "C" meaning that data holds "D". ext4 writes two
 *             files back in any order.
 *   correct   as rename, with an fsync of DIR/tmp before the rename and
 *             of DIR after it: no crash leaves DIR/value other than "v1".
 *   over      makes DIR/value durable holding "v0", then writes "v1" to
 *             DIR/tmp and renames it over DIR/value, with no fsync; relies
 *             on nothing (the test reads what each crash leaves: ext4's
 *             auto_da_alloc commits the new file's size with the rename,
 *             so never an empty file, but zeros where its data was not
 *             yet written).
 *   many N    creates N files, DIR/f0 to DIR/f<N-1>, and writes a byte to
 *             each, with no fsync: ext4 may keep any of them, in any
 *             order, and their number is bounded (crash_states_max).
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char value[256], tmp[256], data[256];

/* Reads up to `cap` bytes of `path` into `buf`: its length, or -1 if it
 * is not there. */
static int slurp(const char *path, char *buf, int cap)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int k = (int)read(fd, buf, (size_t)cap);
    close(fd);
    return k < 0 ? 0 : k;
}

/* Writes `text` to `path`, created or truncated, and fsyncs it if
 * `durable`. */
static void put(const char *path, const char *text, int flags, int durable)
{
    int fd = open(path, O_CREAT | O_WRONLY | flags, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        exit(2);
    if (durable && fsync(fd) != 0)
        exit(3);
    close(fd);
}

static void sync_dir(const char *dir)
{
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    if (d < 0 || fsync(d) != 0)
        exit(4);
    close(d);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 1;
    const char *mode = argv[2], *dir = argv[3];
    snprintf(value, sizeof value, "%s/value", dir);
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    char v[8] = {0}, d[8] = {0};
    int vlen = slurp(value, v, sizeof v), dlen = slurp(data, d, sizeof d);
    int renames = strcmp(mode, "rename") == 0 || strcmp(mode, "correct") == 0;

    /* What the mode relies on, at every start. */
    if (renames && vlen >= 0 && !(vlen == 2 && memcmp(v, "v1", 2) == 0))
        abort();
    if (strcmp(mode, "twofiles") == 0 && vlen == 1 && v[0] == 'C' && !(dlen == 1 && d[0] == 'D'))
        abort();

    /* A first start: the changes. */
    if (renames && vlen < 0) {
        int correct = strcmp(mode, "correct") == 0;
        put(tmp, "v1", O_TRUNC, correct);
        if (rename(tmp, value) != 0)
            return 5;
        if (correct)
            sync_dir(dir);
    } else if (strcmp(mode, "twofiles") == 0 && vlen < 0) {
        put(data, "", 0, 1);
        put(value, "", 0, 1);
        sync_dir(dir);
        put(data, "D", O_APPEND, 0);
        put(value, "C", O_APPEND, 0);
    } else if (strcmp(mode, "many") == 0 && argc > 4) {
        for (int i = 0; i < atoi(argv[4]); i++) {
            char f[300];
            snprintf(f, sizeof f, "%s/f%d", dir, i);
            put(f, "x", O_TRUNC, 0);
        }
    } else if (strcmp(mode, "over") == 0 && vlen < 0) {
        put(tmp, "v0", O_TRUNC, 1);
        if (rename(tmp, value) != 0)
            return 5;
        sync_dir(dir);
        put(tmp, "v1", O_TRUNC, 0);
        if (rename(tmp, value) != 0)
            return 5;
    }
    memset(v, 0, sizeof v);
    memset(d, 0, sizeof d);
    vlen = slurp(value, v, sizeof v);
    dlen = slurp(data, d, sizeof d);
    uint8_t st[7] = {vlen >= 0, (uint8_t)(vlen < 0 ? 0 : vlen), (uint8_t)v[0], (uint8_t)v[1],
                     dlen >= 0, (uint8_t)(dlen < 0 ? 0 : dlen), (uint8_t)d[0]};
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    for (;;)
        pause();
}
