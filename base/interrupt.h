// interrupt.h — Ctrl-C (SIGINT) and SIGTERM as a request to stop: the handler only records the
// signal; the work loops (the thread pool's workers, the references' own workers, the run's
// task loop) poll it and stop early, the pipeline discards what was cut short and keeps what
// finished (references already in the cache), and the command says what was interrupted and
// exits 130. A second signal kills at once (the handler is reset after the first).
#ifndef PP_INTERRUPT_H
#define PP_INTERRUPT_H

// Installs the handler for SIGINT and SIGTERM (sigaction, SA_RESTART | SA_RESETHAND).
// Returns 0, or -1 when sigaction fails (the default action then stays).
int pp_interrupt_install(void);

// The signal that asked to stop (SIGINT, SIGTERM), or 0. Safe from any thread.
int pp_interrupted(void);

// Forgets a recorded signal (tests that interrupt a run and then resume it in one process).
void pp_interrupt_clear(void);

#endif
