/*
 * rbatime.h - the two clocks of rebuild-audit: UTC wall-clock text for
 * records and reports, and a monotonic clock for timings.
 *
 * Times are int64_t seconds since the Unix epoch, UTC, as the store keeps
 * them (store.h); negative times are before 1970.  Text is RFC 3339 in
 * whole seconds with a Z, "YYYY-MM-DDTHH:MM:SSZ": 20 characters for the
 * years 0 to 9999.  No locale and no time zone is consulted.
 */
#ifndef RBA_RBATIME_H
#define RBA_RBATIME_H

#include <stddef.h>
#include <stdint.h>

/* Room for any text rba_time_utc writes, NUL included. */
#define RBA_TIME_TEXT_MAX 32

/*
 * Writes t as "YYYY-MM-DDTHH:MM:SSZ" (NUL-terminated) into out and returns
 * its length.  Outside years 0 to 9999 the year has as many digits as it
 * needs (and a '-' before it), as strftime's %Y gives it; a time the C
 * library cannot break down (about +-2^55 s) gives "invalid".  Never
 * fails; out is always terminated.
 */
size_t rba_time_utc(int64_t t, char out[RBA_TIME_TEXT_MAX]);

/*
 * Reads back exactly what rba_time_utc writes for the years 0 to 9999:
 * n must be 20 and the text must be the one rba_time_utc gives for the
 * time it names (so "2024-02-30T00:00:00Z" and "24:00:00" are refused).
 * s need not be NUL-terminated.  0 with *out set, or -1.
 */
int rba_time_parse_utc(const char *s, size_t n, int64_t *out);

/*
 * Seconds on CLOCK_MONOTONIC: only differences mean anything.  Never
 * goes backwards within a process; not affected by setting the wall
 * clock.  For timings in reports, never for anything stored or signed.
 */
double rba_time_mono(void);

#endif
