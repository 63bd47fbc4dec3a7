/* rbatime.c - UTC text and the monotonic clock. */
#include "common/rbatime.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

size_t
rba_time_utc(int64_t t, char out[RBA_TIME_TEXT_MAX])
{
	time_t tt = (time_t)t;
	struct tm tm;
	size_t n;

	if ((int64_t)tt != t || gmtime_r(&tt, &tm) == NULL ||
	    (n = strftime(out, RBA_TIME_TEXT_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm)) == 0)
		return (size_t)snprintf(out, RBA_TIME_TEXT_MAX, "invalid");
	return n;
}

int
rba_time_parse_utc(const char *s, size_t n, int64_t *out)
{
	struct tm tm;
	char back[RBA_TIME_TEXT_MAX], buf[RBA_TIME_TEXT_MAX];
	int end = 0;
	int64_t t;

	if (s == NULL || n != 20)
		return -1;
	memcpy(buf, s, 20);
	buf[20] = 0;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &end) != 6 ||
	    end != 20)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = (int64_t)timegm(&tm);
	/* Only the canonical text of a time is that time's text. */
	rba_time_utc(t, back);
	if (strcmp(back, buf) != 0)
		return -1;
	*out = t;
	return 0;
}

double
rba_time_mono(void)
{
	struct timespec ts;
	int rc = clock_gettime(CLOCK_MONOTONIC, &ts);

	/* POSIX requires CLOCK_MONOTONIC of every system this builds on. */
	assert(rc == 0);
	(void)rc;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
