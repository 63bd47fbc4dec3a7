/*
 * scratch.h - the one scratch directory of a unit test: made in setup
 * under $TMPDIR (or /tmp), removed with everything in it in teardown.
 */
#ifndef RBA_SCRATCH_H
#define RBA_SCRATCH_H

/* The directory, and "<directory>/store", while one exists; else "". */
extern char scratch_dir[256];
extern char scratch_store[300];

/* Makes a new directory rba-<tag>-XXXXXX (fails the test if it cannot). */
void scratch_make(const char *tag);

/* Removes the directory and all below it; nothing when there is none. */
void scratch_remove(void);

/* "<directory>/<name>", in one of four rotating static buffers. */
const char *scratch_path(const char *name);

#endif
