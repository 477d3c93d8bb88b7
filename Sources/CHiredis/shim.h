#ifndef POMODORO_CHIREDIS_SHIM_H
#define POMODORO_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>

/* The context's error text, or NULL while it has none (errstr is a char array Swift sees as a tuple). */
static inline const char *pomodoro_redis_error(const redisContext *context) {
    return context->err ? context->errstr : NULL;
}
#endif
