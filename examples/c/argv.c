/*
 * argv: reports its arguments, the regression program of the `argv` key
 * (cmc/tests/process_front.rs, issue 28): a server started as its users
 * start it, `argv --id {node} --port {port}`, in place of `PROGRAM i
 * ARGS...`. With `--port N` it listens on 127.0.0.1:N, so the checker's
 * clients reach it there.
 *
 * State, fd 3: its arguments after its name, joined by spaces (at most
 * 64 bytes).
 */
#include "cmc.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char s[CMC_STATE_MAX];
    unsigned len = 0;
    int port = -1;
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (len + (i > 1) + n > sizeof s)
            return 2;
        if (i > 1)
            s[len++] = ' ';
        memcpy(s + len, argv[i], n);
        len += n;
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atoi(argv[i + 1]);
    }
    cmc_record_write(CMC_STATE_FD, s, len);
    if (port > 0) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int l = socket(AF_INET, SOCK_STREAM, 0);
        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 4) < 0)
            return 3;
        int c = accept(l, NULL, NULL);
        if (c < 0 || write(c, "hi", 2) != 2)
            return 4;
    }
    for (;;)
        pause();
}
