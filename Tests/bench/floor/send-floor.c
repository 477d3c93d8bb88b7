// What one loopback TCP send of a tick frame costs the sender on this machine, with nothing else to do: the
// floor under "CPU per delivered frame" (docs/PERFORMANCE.md §6). N connections over loopback, a reader
// process draining them all with epoll, and the sender writing the same 140-byte frame (a WebSocket header and
// a tick's JSON) to each member of one "room" per burst, a burst every 1/(RATE/ROOM) s, for SECONDS. Prints
// the sender's CPU time (user + system, getrusage) per frame and the wall time spent inside send() per frame.
//   cc -O2 -o /tmp/send-floor Tests/bench/floor/send-floor.c
//   /tmp/send-floor [N=10000] [RATE=10000] [SECONDS=10] [NODELAY=1] [ROOM=10]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) { struct rusage u; getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10000;
  int rate = argc > 2 ? atoi(argv[2]) : 10000;
  double seconds = argc > 3 ? atof(argv[3]) : 10;
  int nodelay = argc > 4 ? atoi(argv[4]) : 1;
  struct rlimit rl = { 65536, 65536 }; setrlimit(RLIMIT_NOFILE, &rl);
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  int one = 1; setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(ls, (void *)&a, sizeof a) || listen(ls, 4096)) { perror("listen"); return 1; }
  socklen_t al = sizeof a; getsockname(ls, (void *)&a, &al);
  pid_t reader = fork();
  if (reader == 0) {
    int ep = epoll_create1(0);
    for (int i = 0; i < n; i++) {
      int c = socket(AF_INET, SOCK_STREAM, 0);
      if (connect(c, (void *)&a, sizeof a)) { perror("connect"); _exit(1); }
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fcntl(c, F_SETFL, O_NONBLOCK);
      struct epoll_event e = { .events = EPOLLIN, .data.fd = c };
      epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
    }
    char buf[65536]; struct epoll_event ev[256];
    for (;;) {
      int k = epoll_wait(ep, ev, 256, -1);
      for (int i = 0; i < k; i++) if (read(ev[i].data.fd, buf, sizeof buf) == 0) _exit(0);
    }
  }
  int *fd = malloc(sizeof(int) * n);
  for (int i = 0; i < n; i++) {
    fd[i] = accept(ls, NULL, NULL);
    if (fd[i] < 0) { perror("accept"); return 1; }
    setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
    fcntl(fd[i], F_SETFL, O_NONBLOCK);
  }
  // A tick as the server sends it: a 2-byte WebSocket header and its JSON.
  const char *json = "{\"type\":\"tick\",\"room\":\"storm-0123\",\"phase\":\"focus\",\"remainingMs\":7000,\"endsAt\":1796480000000,\"cycle\":1,\"seq\":4,\"serverTime\":1796479993000}";
  size_t jl = strlen(json); char frame[256]; frame[0] = (char)0x81; frame[1] = (char)jl; memcpy(frame + 2, json, jl);
  size_t fl = jl + 2;
  sleep(1);
  int room = argc > 5 ? atoi(argv[5]) : 10, rooms = n / room, bursts = rate / room;  // bursts a second, one room each
  double interval = 1.0 / bursts, t0 = now(), c0 = cpu(), insend = 0; long sent = 0, failed = 0;
  int next = 0;
  for (long b = 0; ; b++) {
    double due = t0 + b * interval;
    if (due - t0 >= seconds) break;
    double w = due - now();
    if (w > 0) { struct timespec ts = { (time_t)w, (long)((w - (time_t)w) * 1e9) }; nanosleep(&ts, NULL); }
    int r = next++ % rooms;
    double s0 = now();
    for (int m = 0; m < room; m++) {
      if (send(fd[r * room + m], frame, fl, MSG_NOSIGNAL) == (ssize_t)fl) sent++; else failed++;
    }
    insend += now() - s0;
  }
  double c1 = cpu(), t1 = now();
  printf("%d connections, %ld frames of %zu bytes in %.1f s (%ld failed), nodelay %d, %d a burst: sender CPU %.2f µs/frame (%.1f%% of a core), inside send() %.2f µs/frame\n",
         n, sent, fl, t1 - t0, failed, nodelay, room, (c1 - c0) * 1e6 / sent, 100 * (c1 - c0) / (t1 - t0), insend * 1e6 / sent);
  kill(reader, SIGKILL); waitpid(reader, NULL, 0);
  return 0;
}
