/*
 * cli_guard.c - no signal death because of store contents.
 *
 * LMDB trusts the pages of its file: a damaged page number, node size or
 * flag sends it (or a decoder handed one of its values) past the end of
 * the map, which is SIGBUS or SIGSEGV, or into one of its assertions,
 * which is abort(); a page size of zero read from a damaged meta page
 * divides by zero as the store opens, which is SIGFPE.  Checking every
 * page before each use would cost every command a walk of the store;
 * instead, once a command opens a store, these four signals end the
 * process with the cli's one-line diagnostic and exit status 2, as any
 * other unreadable store does, and point at `store check`, which says
 * where the damage is.
 *
 * Sanitizer builds keep their own handlers, so that a fault of the
 * tool's own code is reported by them as the bug it is.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"

#if defined(__SANITIZE_ADDRESS__)
#define GUARD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUARD_SANITIZED 1
#endif
#endif

#ifndef GUARD_SANITIZED
static char guard_msg[4096 + 256];
static size_t guard_len;
static volatile sig_atomic_t guard_armed;
static char guard_stack[1 << 16];

static void
on_fault(int sig)
{
	const char *name = sig == SIGBUS    ? "SIGBUS"
			   : sig == SIGSEGV ? "SIGSEGV"
			   : sig == SIGFPE  ? "SIGFPE"
					    : "SIGABRT";

	if (guard_armed) {
		/* Only async-signal-safe calls from here on. */
		ssize_t w = write(STDERR_FILENO, guard_msg, guard_len);
		w += write(STDERR_FILENO, name, strlen(name));
		w += write(STDERR_FILENO, "); run 'rebuild-audit store check'\n",
			   35);
		(void)w;
		_exit(2);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}
#endif

void
cli_guard_store(const char *what, const char *path)
{
#ifndef GUARD_SANITIZED
	static int installed;
	struct sigaction sa;
	stack_t ss;
	int n;

	n = snprintf(guard_msg, sizeof(guard_msg),
		     "rebuild-audit: %s '%s': the store is damaged: reading it "
		     "faulted (", what, path);
	guard_len = n < 0 ? 0
		    : (size_t)n < sizeof(guard_msg) ? (size_t)n
						    : sizeof(guard_msg) - 1;
	if (!installed) {
		/* An alternate stack, so a fault of a deep stack is caught
		 * too. */
		memset(&ss, 0, sizeof(ss));
		ss.ss_sp = guard_stack;
		ss.ss_size = sizeof(guard_stack);
		(void)sigaltstack(&ss, NULL);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fault;
		sa.sa_flags = SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGABRT, &sa, NULL);
		sigaction(SIGFPE, &sa, NULL);
		installed = 1;
	}
	guard_armed = 1;
#else
	(void)what;
	(void)path;
#endif
}
