#ifndef POMODORO_CLOSE_GUARD_H
#define POMODORO_CLOSE_GUARD_H

#include <sys/eventfd.h>

/* libwebsockets 4.1.6 on a libuv loop closes its event pipe's descriptor (an eventfd) twice when a context is
   destroyed, or when its creation fails part-way: once at once, and once more a turn of the loop later, when
   libuv hands back the pipe's poll handle. Another thread given that number in between loses it to the second
   close. This guard stands between libwebsockets and close(): on a thread that has armed it, the library's
   closing of an eventfd puts a placeholder on the number in the same step (dup3), so the number is never free
   between the two closes, and the second close closes the placeholder.

   Only libwebsockets' own calls pass through it (its entry for close() in its table of imported functions
   points at the guard); every other close() in the process is untouched. */

/* Puts the guard in place, once per process; safe from any thread. Returns 1 when libwebsockets' calls to
   close() go through the guard, 0 when they could not be redirected (the double close is then not covered). */
int pomodoro_close_guard_install(void);

/* Whether libwebsockets' calls to close() go through the guard now. */
int pomodoro_close_guard_installed(void);

/* Arms or disarms the guard for the calling thread: while armed, libwebsockets' closes of an eventfd on this
   thread leave a placeholder on the number. Arm around lws_create_context and lws_context_destroy only. */
void pomodoro_close_guard_arm(void);
void pomodoro_close_guard_disarm(void);

/* Closes the placeholders this thread left that are still in place (the library did not close the number a
   second time), once the loop has handed back every handle. Returns how many it closed. */
int pomodoro_close_guard_release(void);

/* How many placeholders this thread holds (left by the guard, not yet released). */
int pomodoro_close_guard_held(void);

/* The guard's close itself, as libwebsockets calls it (for tests of the placeholder). */
int pomodoro_close_guard_close(int fd);

#endif
