/*
 * fuzz.h - what every harness in tests/fuzz/ shares.
 *
 * Each fuzz_<surface>.c defines LLVMFuzzerTestOneInput() and nothing
 * else that libFuzzer needs: `make fuzz` links it with -fsanitize=fuzzer
 * (clang) to explore, and the same binary given files instead of a
 * directory replays them once each (`make fuzz-replay`, part of make
 * check).  An invariant broken by an input is reported with
 * fuzz_fail(), which aborts so that libFuzzer keeps the input.
 */
#ifndef RBA_FUZZ_H
#define RBA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_fail(...)                                                        \
	do {                                                                  \
		fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__);          \
		fprintf(stderr, __VA_ARGS__);                                 \
		fputc('\n', stderr);                                          \
		abort();                                                      \
	} while (0)

#endif
