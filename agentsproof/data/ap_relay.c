/*
 * ap-relay: the model endpoint's relay inside a trial's container (agentsproof).
 *
 * A container with --network none has only its own loopback. This small static program
 * (no libc of the image needed, no python) listens on 127.0.0.1:PORT inside the container
 * and forwards each connection to a unix socket that agentsproof serves on the host and
 * mounts read-only into the container; agentsproof forwards that socket to 127.0.0.1:PORT
 * on the host, the model endpoint. Nothing else is reachable.
 *
 *   ap-relay PORT=/path/to/lo-PORT.sock [PORT=SOCKET ...]
 *   ap-relay            (no port: just wait; the container's idle main process)
 *
 * One process per listening port, one child per connection, copying both ways with poll().
 * Built static by `make relay` (or on first use): gcc -static -O2 -o ap-relay ap_relay.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int relay(int a, int b) {
    struct pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    char buf[65536];
    int open_dirs = 2;
    while (open_dirs > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            int other = i == 0 ? b : a;
            if (n <= 0) {
                shutdown(other, SHUT_WR);
                fds[i].fd = -1;
                open_dirs--;
                continue;
            }
            for (ssize_t off = 0; off < n;) {
                ssize_t w = write(other, buf + off, (size_t)(n - off));
                if (w < 0) {
                    if (errno == EINTR) continue;
                    return 1;
                }
                off += w;
            }
        }
    }
    return 0;
}

static int serve(int port, const char *path) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    struct sockaddr_in addr;
    if (ls < 0) return 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(ls, 64) < 0) {
        fprintf(stderr, "ap-relay: cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
        return 1;
    }
    for (;;) {
        int c = accept(ls, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return 1;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(ls);
            int u = socket(AF_UNIX, SOCK_STREAM, 0);
            struct sockaddr_un ua;
            memset(&ua, 0, sizeof ua);
            ua.sun_family = AF_UNIX;
            strncpy(ua.sun_path, path, sizeof ua.sun_path - 1);
            if (u < 0 || connect(u, (struct sockaddr *)&ua, sizeof ua) < 0) _exit(1);
            _exit(relay(c, u));
        }
        close(c);
    }
}

int main(int argc, char **argv) {
    signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        for (;;) pause(); /* nothing to relay: the container's idle main process */
    }
    for (int i = 1; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        int port = eq ? atoi(argv[i]) : 0;
        if (!eq || port <= 0 || port > 65535 || strlen(eq + 1) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
            fprintf(stderr, "ap-relay: bad argument %s\n", argv[i]);
            return 2;
        }
        if (i == argc - 1) return serve(port, eq + 1);
        if (fork() == 0) return serve(port, eq + 1);
    }
    return 0;
}
