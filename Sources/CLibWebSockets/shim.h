#ifndef POMODORO_CLIBWEBSOCKETS_SHIM_H
#define POMODORO_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

/* LWS_PRE is a function-like macro Swift cannot see: the headroom every lws_write buffer needs. */
static inline size_t pomodoro_lws_pre(void) { return LWS_PRE; }

/* Per-connection memory the library allocates (per_session_data_size) and clears at every protocol bind, which
   happens when a connection is accepted and again after each keep-alive transaction: what the socket had seen
   then, and whether a request head got through since. */
typedef struct pomodoro_http_session {
    uint64_t received_at_bind;
    uint64_t written_at_bind;
    int32_t dispatched;
} pomodoro_http_session_t;

/* What the kernel says of a TCP socket: bytes received from the peer, bytes handed to the kernel to send, and
   milliseconds since data last arrived. */
typedef struct pomodoro_tcp_counters {
    uint64_t received;
    uint64_t written;
    uint32_t ms_since_receive;
} pomodoro_tcp_counters_t;

/* The C library's struct tcp_info stops before the byte counters the kernel has reported since Linux 4.1; the
   kernel's layout goes on with these 64-bit fields (the base struct is 104 bytes, so no padding between). */
struct pomodoro_tcp_info {
    struct tcp_info base;
    uint64_t pacing_rate;
    uint64_t max_pacing_rate;
    uint64_t bytes_acked;
    uint64_t bytes_received;
};

static inline int pomodoro_tcp_counters(int fd, pomodoro_tcp_counters_t *out) {
    struct pomodoro_tcp_info info;
    socklen_t size = sizeof info;
    int queued = 0;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0 || size < sizeof info)
        return -1;
    /* Bytes written but not yet acknowledged (TIOCOUTQ is SIOCOUTQ for TCP). */
    if (ioctl(fd, TIOCOUTQ, &queued) != 0)
        return -1;
    out->received = info.bytes_received;
    out->written = info.bytes_acked + (uint64_t)queued;
    out->ms_since_receive = info.base.tcpi_last_data_recv;
    return 0;
}

/* Names the calling thread (at most 15 bytes show) for ps, top and debuggers; prctl is variadic, so
   Swift cannot call it. */
static inline void pomodoro_name_this_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

#endif
