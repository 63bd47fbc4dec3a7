/* scratch.c - the scratch directory of a unit test (scratch.h). */
#define _XOPEN_SOURCE 700
#include "tests/unit/scratch.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

char scratch_dir[256];
char scratch_store[300];

static int
rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void
scratch_make(const char *tag)
{
	const char *t = getenv("TMPDIR");

	snprintf(scratch_dir, sizeof(scratch_dir), "%s/rba-%s-XXXXXX",
		 t != NULL && t[0] != 0 ? t : "/tmp", tag);
	ck_assert_ptr_nonnull(mkdtemp(scratch_dir));
	snprintf(scratch_store, sizeof(scratch_store), "%s/store", scratch_dir);
}

void
scratch_remove(void)
{
	if (scratch_dir[0] != 0)
		nftw(scratch_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	scratch_dir[0] = 0;
	scratch_store[0] = 0;
}

const char *
scratch_path(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", scratch_dir, name);
	return buf[i];
}
