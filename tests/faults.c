/*
 * faults.c - fault injection for tests/faults.sh (make check-faults).
 * Plain C, no project code.  Built two ways:
 *
 *   build/faults.so (LD_PRELOAD): interposes malloc, calloc, realloc,
 *   write, pwrite, writev, pwritev, fsync and fdatasync for the whole
 *   process, liblmdb's own pwrite/writev/fdatasync included (a link-time
 *   --wrap cannot reach calls inside a shared library).
 *
 *   -DFAULTS_NO_ALLOC: the same without the allocation functions, for a
 *   binary under AddressSanitizer, whose allocator must stay its own;
 *   -DFAULTS_WRAP then builds the allocation half as __wrap_malloc,
 *   __wrap_calloc and __wrap_realloc for a link with
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (the project's own
 *   allocations, which are the ones whose failure paths it owns).
 *
 * Calls made while dlopen() runs (the constructors of a library loaded
 * late: OpenBLAS, which brings libgfortran, whose constructor aborts
 * when malloc fails) are neither counted nor failed: they are outside
 * the tool's reach, and under ASan the --wrap half cannot see them
 * either.
 *
 * RBA_FAULT=KIND:K[:persist][:full] makes the K-th call of KIND (alloc,
 * write or sync) fail -- only that call, or with :persist every later
 * call of that kind too -- as a full disk or an I/O error would (ENOSPC
 * for writes, EIO for syncs) or as memory running out (NULL, ENOMEM).
 * :full makes it a file system that has just filled up, as one does: the
 * K-th write stores part of its bytes and returns the short count (the
 * later ones, with :persist, ENOSPC), a sync fails with ENOSPC, and from
 * the first injection on statvfs and fstatvfs report no free blocks.  Each
 * injection appends "injected KIND K" to RBA_FAULT_LOG; without
 * RBA_FAULT the counts of calls are appended at exit instead
 * ("calls alloc N write N sync N"), so a sweep knows its range.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { K_ALLOC, K_WRITE, K_SYNC, K_N };
static const char *const kind_name[K_N] = { "alloc", "write", "sync" };

static int parsed;	/* 1 once RBA_FAULT was read */
static int fault_kind = -1;
static unsigned long fault_at;
static int persist;
static int full;	/* :full */
static int filled;	/* a :full injection happened: no room left */
static unsigned long calls[K_N];
static int in_log;
static int in_dlopen;

/* Writes to the log with the raw system call: never counted, never
 * failed, no allocation. */
static void
log_line(const char *text)
{
	const char *path = getenv("RBA_FAULT_LOG");
	int fd;

	if (path == NULL)
		return;
	fd = (int)syscall(SYS_open, path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	(void)syscall(SYS_write, fd, text, strlen(text));
	(void)syscall(SYS_close, fd);
}

static void
parse(void)
{
	const char *s = getenv("RBA_FAULT");

	parsed = 1;
	if (s == NULL || *s == '\0')
		return;
	for (int k = 0; k < K_N; k++) {
		size_t n = strlen(kind_name[k]);
		if (strncmp(s, kind_name[k], n) == 0 && s[n] == ':') {
			char *end;
			fault_kind = k;
			fault_at = strtoul(s + n + 1, &end, 10);
			persist = strstr(end, ":persist") != NULL;
			full = strstr(end, ":full") != NULL;
		}
	}
}

/* 1 when this call of kind k must fail. */
static int
should_fail(int k)
{
	unsigned long n;
	char line[64];

	if (!parsed)
		parse();
	if (__atomic_load_n(&in_dlopen, __ATOMIC_RELAXED))
		return 0;
	n = __atomic_add_fetch(&calls[k], 1, __ATOMIC_RELAXED);
	if (k != fault_kind || in_log)
		return 0;
	if (n == fault_at || (persist && n > fault_at)) {
		if (full)
			__atomic_store_n(&filled, 1, __ATOMIC_RELAXED);
		if (n == fault_at) {
			in_log = 1;
			snprintf(line, sizeof(line), "injected %s %lu\n", kind_name[k], n);
			log_line(line);
			in_log = 0;
		}
		return 1;
	}
	return 0;
}

__attribute__((destructor)) static void
report(void)
{
	char line[128];

	if (!parsed)
		parse();
	if (fault_kind >= 0)
		return;
	in_log = 1;
	snprintf(line, sizeof(line), "calls alloc %lu write %lu sync %lu\n",
		 calls[K_ALLOC], calls[K_WRITE], calls[K_SYNC]);
	log_line(line);
}

#ifndef FAULTS_WRAP
#define REAL(type, name, args)                                                \
	static type(*real_##name) args;                                       \
	if (real_##name == NULL)                                              \
		real_##name = (type(*) args)dlsym(RTLD_NEXT, #name)

void *
dlopen(const char *file, int mode)
{
	void *h;

	REAL(void *, dlopen, (const char *, int));
	__atomic_add_fetch(&in_dlopen, 1, __ATOMIC_RELAXED);
	h = real_dlopen(file, mode);
	__atomic_sub_fetch(&in_dlopen, 1, __ATOMIC_RELAXED);
	return h;
}

/*
 * How many of n bytes the failing write still stores: under :full the
 * first failing write fills the disk (half of it goes), and none after.
 */
static size_t
short_part(size_t n)
{
	static int shorted;

	if (!full || n < 2 || __atomic_exchange_n(&shorted, 1, __ATOMIC_RELAXED))
		return 0;
	return n / 2;
}

ssize_t
write(int fd, const void *p, size_t n)
{
	REAL(ssize_t, write, (int, const void *, size_t));
	if (should_fail(K_WRITE)) {
		size_t part = short_part(n);
		if (part > 0)
			return real_write(fd, p, part);
		errno = ENOSPC;
		return -1;
	}
	return real_write(fd, p, n);
}

ssize_t
pwrite(int fd, const void *p, size_t n, off_t off)
{
	REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
	if (should_fail(K_WRITE)) {
		size_t part = short_part(n);
		if (part > 0)
			return real_pwrite(fd, p, part, off);
		errno = ENOSPC;
		return -1;
	}
	return real_pwrite(fd, p, n, off);
}

ssize_t
pwrite64(int fd, const void *p, size_t n, off_t off)
{
	return pwrite(fd, p, n, off);
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, writev, (int, const struct iovec *, int));
	if (should_fail(K_WRITE)) {
		size_t part = cnt > 0 ? short_part(iov[0].iov_len) : 0;
		if (part > 0)
			return real_writev(fd, &(struct iovec){ iov[0].iov_base, part }, 1);
		errno = ENOSPC;
		return -1;
	}
	return real_writev(fd, iov, cnt);
}

ssize_t
pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(ssize_t, pwritev, (int, const struct iovec *, int, off_t));
	if (should_fail(K_WRITE)) {
		size_t part = cnt > 0 ? short_part(iov[0].iov_len) : 0;
		if (part > 0)
			return real_pwritev(fd, &(struct iovec){ iov[0].iov_base, part },
					    1, off);
		errno = ENOSPC;
		return -1;
	}
	return real_pwritev(fd, iov, cnt, off);
}

int
fsync(int fd)
{
	REAL(int, fsync, (int));
	if (should_fail(K_SYNC)) {
		errno = full ? ENOSPC : EIO;
		return -1;
	}
	return real_fsync(fd);
}

int
fdatasync(int fd)
{
	REAL(int, fdatasync, (int));
	if (should_fail(K_SYNC)) {
		errno = full ? ENOSPC : EIO;
		return -1;
	}
	return real_fdatasync(fd);
}

/* A filled file system has no free blocks left. */
static void
no_room(struct statvfs *v)
{
	if (__atomic_load_n(&filled, __ATOMIC_RELAXED))
		v->f_bfree = v->f_bavail = 0;
}

int
statvfs(const char *path, struct statvfs *v)
{
	int r;

	REAL(int, statvfs, (const char *, struct statvfs *));
	if ((r = real_statvfs(path, v)) == 0)
		no_room(v);
	return r;
}

int
fstatvfs(int fd, struct statvfs *v)
{
	int r;

	REAL(int, fstatvfs, (int, struct statvfs *));
	if ((r = real_fstatvfs(fd, v)) == 0)
		no_room(v);
	return r;
}
#endif

#if !defined(FAULTS_NO_ALLOC) || defined(FAULTS_WRAP)
#ifdef FAULTS_WRAP
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
#define NAME(f) __wrap_##f
#define UNDER(f) __real_##f
#else
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t a, size_t b);
void *__libc_realloc(void *p, size_t n);
#define NAME(f) f
#define UNDER(f) __libc_##f
#endif

void *NAME(malloc)(size_t n);
void *NAME(calloc)(size_t a, size_t b);
void *NAME(realloc)(void *p, size_t n);

void *
NAME(malloc)(size_t n)
{
	if (should_fail(K_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return UNDER(malloc)(n);
}

void *
NAME(calloc)(size_t a, size_t b)
{
	if (should_fail(K_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return UNDER(calloc)(a, b);
}

void *
NAME(realloc)(void *p, size_t n)
{
	if (should_fail(K_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return UNDER(realloc)(p, n);
}
#endif
