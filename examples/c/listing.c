/*
 * listing: listings of the data directory as ext4 gives them (dir_order;
 * cmc/tests/process_dirs.rs). From the review of the directory order;
 * each mode aborts natively, on ext4, where said.
 *
 *   listing 0 DIR skipdots  makes x and y, lists with readdir skipping the
 *                           first two entries as "." and "..", and aborts
 *                           if x or y is not among the rest: in a
 *                           directory of one block ext4 hashes "." and
 *                           ".." like any name (9 of 10 fresh file
 *                           systems abort)
 *   listing 0 DIR add       makes x, lists with readdir, makes x.bak on
 *                           seeing x, and aborts if the listing gave fewer
 *                           than 2 names: ext4 reads a directory of one
 *                           block whole at the first getdents64, so x.bak
 *                           is never listed (10 of 10 abort)
 *   listing 0 DIR again     makes x, lists, makes y, and aborts if the
 *                           listing gave a name twice (0 of 10 abort)
 *   listing 0 DIR wide      makes 16 names of 250 bytes, and lists:
 *                           past one block, which ext4 indexes, listing
 *                           "." and ".." first (the checker's error)
 *   listing 0 DIR seek      makes x and y, lists them keeping the position
 *                           (telldir) before the last name listed, makes
 *                           z, goes back there (seekdir) and aborts if the
 *                           next entry is not that name: ext4's position
 *                           is the hash of the entry it goes on from, so
 *                           z falls before or after it (0 of 10 abort)
 *   listing N DIR listenfirst  node 0 makes x, lists, then listens; node 1
 *                           dials it and aborts if it was listening: the
 *                           path where node 0's start was done first
 *                           (started one at a time, 10 of 10 abort)
 *
 * State, fd 3: {names listed, of them twice}.
 * Built by the tests (cmc/tests/process_support): cc -I.
 */
#include "cmc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir;

static void make(const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int f = open(p, O_CREAT | O_WRONLY, 0644);
    if (f < 0)
        exit(3);
    close(f);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 1;
    dir = argv[2];
    const char *mode = argv[3];
    if (strcmp(mode, "listenfirst") == 0 && argv[1][0] != '0') {
        int c = cmc_dial(0);
        uint8_t st[2] = {c >= 0, 0};
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        if (c >= 0)
            abort();
        pause();
    }
    if (strcmp(mode, "wide") != 0)
        make("x");
    if (strcmp(mode, "skipdots") == 0 || strcmp(mode, "seek") == 0)
        make("y");
    if (strcmp(mode, "wide") == 0)
        for (int i = 0; i < 16; i++) {
            char name[251];
            memset(name, 'a' + i, 250);
            name[250] = 0;
            make(name);
        }
    DIR *d = opendir(dir);
    if (!d)
        exit(4);
    if (strcmp(mode, "skipdots") == 0) {
        readdir(d);
        readdir(d);
    }
    char seen[8][256];
    int listed = 0, twice = 0, made = 0;
    struct dirent *e;
    long at = telldir(d), last_at = -1;
    char last[256] = "";
    while ((e = readdir(d)) != NULL) {
        long here = at;
        at = telldir(d);
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        last_at = here;
        snprintf(last, sizeof last, "%s", e->d_name);
        for (int i = 0; i < listed && i < 8; i++)
            twice += strcmp(seen[i], e->d_name) == 0;
        if (listed < 8)
            snprintf(seen[listed], sizeof seen[listed], "%s", e->d_name);
        listed++;
        if (!made && (strcmp(mode, "add") == 0 || strcmp(mode, "again") == 0)) {
            make(strcmp(mode, "add") == 0 ? "x.bak" : "y");
            made = 1;
        }
    }
    if (strcmp(mode, "seek") == 0) {
        make("z");
        seekdir(d, last_at);
        e = readdir(d);
        uint8_t st[2] = {(uint8_t)listed, e != NULL && strcmp(e->d_name, last) == 0};
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        if (!st[1])
            abort();
        pause();
    }
    closedir(d);
    if (strcmp(mode, "listenfirst") == 0 && cmc_listen(0) < 0)
        exit(2);
    uint8_t st[2] = {(uint8_t)listed, (uint8_t)twice};
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    if (strcmp(mode, "skipdots") == 0 && listed < 2)
        abort();
    if (strcmp(mode, "add") == 0 && listed < 2)
        abort();
    if (twice)
        abort();
    pause();
    return 0;
}
