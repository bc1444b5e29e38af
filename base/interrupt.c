// interrupt.c — the stop request (interrupt.h).
#include "interrupt.h"

#include <signal.h>
#include <string.h>

// The program's one piece of global mutable state, by necessity: a signal handler receives no
// context pointer, so what it records must live at file scope, and a volatile sig_atomic_t is the
// only object C11 lets a handler write (7.14.1.1). Only the handler writes it (and the tests'
// pp_interrupt_clear); everyone else reads it through pp_interrupted.
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

int pp_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    // SA_RESTART: a read or write in progress is not cut short by EINTR; SA_RESETHAND: a second
    // Ctrl-C takes the default action (the user who presses it twice wants out now).
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    // A SIGINT the parent set to be ignored (a shell's background job) stays ignored: Ctrl-C at
    // the terminal is not meant for it.
    struct sigaction old;
    if (sigaction(SIGINT, NULL, &old) != 0)
        return -1;
    if (old.sa_handler != SIG_IGN && sigaction(SIGINT, &sa, NULL) != 0)
        return -1;
    return sigaction(SIGTERM, &sa, NULL) != 0 ? -1 : 0;
}

int pp_interrupted(void)
{
    return stop_signal;
}

void pp_interrupt_clear(void)
{
    stop_signal = 0;
}
