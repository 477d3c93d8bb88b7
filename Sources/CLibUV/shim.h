#ifndef POMODORO_CLIBUV_SHIM_H
#define POMODORO_CLIBUV_SHIM_H

#include <uv.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* libuv's handle types are distinct C structs that all begin with the uv_handle_t fields; Swift cannot cast
   between them, so these do it. */
static inline uv_handle_t *pomodoro_uv_timer_handle(uv_timer_t *timer) { return (uv_handle_t *)timer; }
static inline uv_handle_t *pomodoro_uv_async_handle(uv_async_t *async) { return (uv_handle_t *)async; }
static inline uv_handle_t *pomodoro_uv_poll_handle(uv_poll_t *poll) { return (uv_handle_t *)poll; }
static inline uv_handle_t *pomodoro_uv_check_handle(uv_check_t *check) { return (uv_handle_t *)check; }
static inline uv_handle_t *pomodoro_uv_prepare_handle(uv_prepare_t *prepare) { return (uv_handle_t *)prepare; }

/* The loop's precise timer: a timerfd on CLOCK_MONOTONIC (the clock of uv_hrtime), armed for an absolute
   moment in nanoseconds, so a wake-up is not rounded to libuv's millisecond. */
static inline int pomodoro_timerfd_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}
static inline int pomodoro_timerfd_arm(int fd, uint64_t due_ns) {
    struct itimerspec spec = { { 0, 0 }, { (time_t)(due_ns / 1000000000u), (long)(due_ns % 1000000000u) } };
    if (due_ns == 0) spec.it_value.tv_nsec = 1; /* zero would disarm it: the earliest moment instead */
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}
static inline void pomodoro_timerfd_clear(int fd) {
    uint64_t expirations;
    (void)read(fd, &expirations, sizeof expirations);
}

#endif
