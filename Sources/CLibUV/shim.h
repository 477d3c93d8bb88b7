#ifndef POMODORO_CLIBUV_SHIM_H
#define POMODORO_CLIBUV_SHIM_H

#include <uv.h>

/* libuv's handle types are distinct C structs that all begin with the uv_handle_t fields; Swift cannot cast
   between them, so these do it. */
static inline uv_handle_t *pomodoro_uv_timer_handle(uv_timer_t *timer) { return (uv_handle_t *)timer; }
static inline uv_handle_t *pomodoro_uv_async_handle(uv_async_t *async) { return (uv_handle_t *)async; }

#endif
