#ifndef POMODORO_CJSONC_SHIM_H
#define POMODORO_CJSONC_SHIM_H
#include <json-c/json.h>
#endif
