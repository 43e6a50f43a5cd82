// SIGINT / SIGTERM / SIGHUP / SIGQUIT / SIGUSR1 / SIGUSR2 / SIGPIPE / SIGXFSZ
// during a run.
//
// install_interrupt_handling() blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT,
// SIGUSR1 and SIGUSR2 in
// every thread and hands them to one watcher thread (sigwait), so no signal
// ever lands inside plugin code or the allocator, and the reaction is
// ordinary C++:
//   - first signal with no on-first action set (no run in progress): the
//     process exits at once with 128 + signal, as it would by default;
//   - first signal: interrupt_requested() turns true and the on-first action
//     runs (the runner's: abandon the case in progress by killing its worker);
//     the runner then stops starting cases, writes the result set of what
//     finished marked "complete": false, and exits 128 + signal (130 SIGINT,
//     143 SIGTERM, 129 SIGHUP, 131 SIGQUIT, 138 SIGUSR1, 140 SIGUSR2);
//   - second signal: the on-second action runs (write the partial result set
//     from the journal) and the process exits at once with 128 + signal.
// SIGPIPE is ignored: a closed stdout (`opbench run ... | head`) must not end
// the run; the result set is still written. SIGXFSZ is ignored: a write
// past `ulimit -f` fails with EFBIG and is reported (exit 3).
#pragma once

#include <functional>
#include <string>

namespace opbench {

// Call first thing in main(), before any thread exists (threads inherit the
// signal mask; a thread started earlier could receive SIGINT itself).
// Idempotent.
void install_interrupt_handling();

[[nodiscard]] bool interrupt_requested() noexcept;
// The signal once interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
// SIGUSR2), else 0.
[[nodiscard]] int interrupt_signal() noexcept;
// 128 + the signal (130 for SIGINT, 143 for SIGTERM); 0 when not interrupted.
[[nodiscard]] int interrupt_exit_status() noexcept;

// Actions run on the watcher thread. Setting one replaces the previous;
// an empty function clears it. The on-second action should not take long:
// the user asked to stop at once.
void on_first_interrupt(std::function<void()> action);
void on_second_interrupt(std::function<void()> action);

// What the first signal's message says becomes of the run, after "stopping;"
// (a command that finishes it must exist: `ab` names its own). Empty: run's,
// "the result set will hold the cases that finished, marked incomplete
// (--resume finishes it)".
void set_interrupt_outcome(std::string text);

} // namespace opbench
