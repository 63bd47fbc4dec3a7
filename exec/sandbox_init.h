/*
 * sandbox_init.h - what the sandbox's first program (sandbox_init.c)
 * and the tool (sandbox.c) agree on: the report's magic and the codes
 * in it.  The layout is in sandbox_init.c's head comment.
 */
#ifndef RBA_SANDBOX_INIT_H
#define RBA_SANDBOX_INIT_H

#define SANDBOX_INIT_MAGIC "RBASBX1\n"

/* How the command ended. */
#define SANDBOX_INIT_EXITED 1
#define SANDBOX_INIT_SIGNALED 2
#define SANDBOX_INIT_NOT_STARTED 3

/* What a name under /out was. */
#define SANDBOX_INIT_ABSENT 0
#define SANDBOX_INIT_REGULAR 1
#define SANDBOX_INIT_SYMLINK 2
#define SANDBOX_INIT_FIFO 3
#define SANDBOX_INIT_DIRECTORY 4
#define SANDBOX_INIT_DEVICE 5
#define SANDBOX_INIT_SOCKET 6
#define SANDBOX_INIT_UNREADABLE 7
#define SANDBOX_INIT_TOO_LARGE 8

#endif
