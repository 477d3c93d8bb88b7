#ifndef POMODORO_CLIBUV_SHIM_H
#define POMODORO_CLIBUV_SHIM_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

/* libuv's handle types are distinct C structs that all begin with the uv_handle_t fields; Swift cannot cast
   between them, so these do it. */
static inline uv_handle_t *pomodoro_uv_timer_handle(uv_timer_t *timer) { return (uv_handle_t *)timer; }
static inline uv_handle_t *pomodoro_uv_async_handle(uv_async_t *async) { return (uv_handle_t *)async; }

/* A descriptor of no use at `number` or the lowest free number above it, marked as ours; -1 on failure. */
static inline int pomodoro_reserve_descriptor(int number) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fd == number) return fd;
    int placed = fcntl(fd, F_DUPFD_CLOEXEC, number);
    close(fd);
    return placed;
}

/* Whether `fd` is open on /dev/null (the placeholder above), not on something another part of the process
   opened meanwhile. */
static inline int pomodoro_is_placeholder(int fd) {
    struct stat mine, null;
    if (fstat(fd, &mine) != 0 || stat("/dev/null", &null) != 0) return 0;
    return mine.st_rdev == null.st_rdev && S_ISCHR(mine.st_mode);
}

static inline void pomodoro_note_eventfd_poll(uv_handle_t *handle, void *found) {
    uv_os_fd_t fd;
    char path[64], target[64];
    ssize_t length;
    if (handle->type != UV_POLL || uv_is_closing(handle) || uv_fileno(handle, &fd) != 0) return;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    length = readlink(path, target, sizeof target - 1);
    if (length <= 0) return;
    target[length] = 0;
    if (strcmp(target, "anon_inode:[eventfd]") == 0) *(int *)found = fd;
}

/* The descriptor of the eventfd a poll handle on `loop` watches (libwebsockets' event pipe), or -1. */
static inline int pomodoro_uv_polled_eventfd(uv_loop_t *loop) {
    int found = -1;
    uv_walk(loop, pomodoro_note_eventfd_poll, &found);
    return found;
}

#endif
