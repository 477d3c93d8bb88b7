#ifndef POMODORO_CPOSTGRES_SHIM_H
#define POMODORO_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif
