/*
 * pause.c - the minik8s "pause" container (infra container of a Pod).
 *
 * It owns the Pod's network (and optionally PID/IPC) namespace and otherwise
 * does nothing, like Kubernetes' build/pause/linux/pause.c:
 *   - SIGTERM / SIGINT: exit 0 at once, so `docker stop` returns promptly;
 *   - SIGCHLD: reap every exited child with waitpid(-1, WNOHANG), so that
 *     orphans re-parented to it (when it is PID 1 of a shared PID namespace)
 *     never stay zombies;
 *   - otherwise sleep in pause() forever.
 *
 * Built as a static binary by scripts/build-images.sh:
 *   gcc -static -Os -s -o pause scripts/pause.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAUSE_VERSION "minik8s-pause 1.0"

static void sigdown(int signo) {
    (void)signo;
    _exit(0);
}

static void sigreap(int signo) {
    int saved_errno = errno;
    (void)signo;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = saved_errno;
}

static void install(int signo, void (*handler)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, NULL) < 0) {
        perror("pause: sigaction");
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
        puts(PAUSE_VERSION);
        return 0;
    }
    if (getpid() != 1) {
        /* Not an error: it still works, it just will not reap the namespace's orphans. */
        fprintf(stderr, "pause: warning: not running as PID 1\n");
    }

    install(SIGINT, sigdown, 0);
    install(SIGTERM, sigdown, 0);
    install(SIGCHLD, sigreap, SA_NOCLDSTOP | SA_RESTART);

    for (;;) {
        pause();
    }
    fprintf(stderr, "pause: error: infinite loop terminated\n");
    return 42;
}
