/*
 * segments: a log kept as numbered segment files in the data directory
 * (dir_order; cmc/tests/process_dirs.rs). Node 0's first life writes
 * seg1, seg2 and seg3, each made durable (write, fsync, fsync of the
 * directory), and waits. A later life recovers: it lists the directory,
 * takes a segment for the newest, and aborts if that is not the newest
 * segment there.
 *
 *   segments 0 DIR last   the last name listed is the newest: a bug, since
 *                         a listing gives the file system's order, not the
 *                         names' (on ext4, a hash of each name)
 *   segments 0 DIR max    the greatest number listed: correct
 *
 * State, fd 3: {life, newest recovered}.
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

static void report(uint8_t life, uint8_t newest)
{
    uint8_t s[2] = {life, newest};
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 1;
    const char *dir = argv[2];
    int last = strcmp(argv[3], "last") == 0;
    DIR *d = opendir(dir);
    if (!d)
        return 2;
    int taken = 0, max = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int k;
        if (sscanf(e->d_name, "seg%d", &k) != 1)
            continue;
        if (last || k > taken)
            taken = k;
        if (k > max)
            max = k;
    }
    closedir(d);
    if (max == 0) {
        report(1, 0);
        for (int k = 1; k <= 3; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seg%d", dir, k);
            int f = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
            int df = open(dir, O_RDONLY | O_DIRECTORY);
            char b = (char)('0' + k);
            if (f < 0 || df < 0 || write(f, &b, 1) != 1 || fsync(f) != 0 || fsync(df) != 0)
                return 3;
            close(f);
            close(df);
        }
        report(1, 3);
    } else {
        report(2, (uint8_t)taken);
        if (taken != max)
            abort();
    }
    pause();
    return 0;
}
