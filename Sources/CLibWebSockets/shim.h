#ifndef POMODORO_CLIBWEBSOCKETS_SHIM_H
#define POMODORO_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <sys/prctl.h>

/* LWS_PRE is a function-like macro Swift cannot see: the headroom every lws_write buffer needs. */
static inline size_t pomodoro_lws_pre(void) { return LWS_PRE; }

/* A timer: the sul must be the first member so the callback can cast back to the owner. */
typedef struct pomodoro_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
} pomodoro_timer_t;

static inline void *pomodoro_timer_owner(lws_sorted_usec_list_t *sul) {
    return ((pomodoro_timer_t *)sul)->owner;
}

/* Names the calling thread (at most 15 bytes show) for ps, top and debuggers; prctl is variadic, so
   Swift cannot call it. */
static inline void pomodoro_name_this_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

#endif
