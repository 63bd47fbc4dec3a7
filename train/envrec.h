/*
 * envrec.h - the environment record (doc/design.md section 5.4).
 *
 * Canonical text: "key=value\n" lines sorted by key (bytewise), keys of
 * [a-z0-9._], values printable with no newline (other bytes become '?').
 * Its digest is the SHA-256 of the text.  Keys:
 *
 *   abi.trainer          trainer ABI used for new trainings
 *   build.cc             compiler identification (first line of --version)
 *   build.flags          optimization and floating-point flags of the build
 *   cpu.arch             x86_64, aarch64, ...
 *   cpu.isa              relevant ISA extensions, sorted, space-separated
 *   cpu.model            CPU model name
 *   determinism.mode     strict or fast
 *   determinism.threads  pinned thread count
 *   kernel.isa           vector path of the strict kernels (same bits on all)
 *   lib.libc             C library and version
 *   lib.libsodium, lib.libyaml, lib.lmdb, lib.zstd   runtime versions
 *   lib.openblas         OpenBLAS's configuration string
 *   openblas.corename    the core OpenBLAS selected on this machine
 *   openblas.threads     OpenBLAS's thread count in fast mode; "unused"
 *                        in strict mode, which never calls BLAS
 *   tool.revision        source revision the tool was built from
 *   tool.version         tool version
 */
#ifndef RBA_ENVREC_H
#define RBA_ENVREC_H

#include <stddef.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"

#define ENVREC_MAX_BYTES (64u << 10) /* a record's text */
#define ENVREC_MAX_FIELDS 256
#define ENVREC_MAX_VALUE 1024 /* bytes kept of one value */

/*
 * Appends the record of this process for the given determinism mode and
 * thread count.  In fast mode it sets OpenBLAS's thread count (as
 * training would) so the record shows it.  0 or RBA_E_NOMEM.
 */
int envrec_capture(enum pins_det_mode mode, unsigned threads,
		   struct rba_buf *out);

/*
 * The code revision this binary was built from, as pins record it:
 * "<tool version>+<git revision>".  Static string.
 */
const char *envrec_code_revision(void);

/* SHA-256 of the text. */
void envrec_digest(const char *text, size_t n, struct rba_digest *out);

struct envrec_field {
	char *key;
	char *value;
};

struct envrec {
	size_t n;
	struct envrec_field *f; /* sorted by key, keys distinct */
};

/*
 * Parses a record.  RBA_E_SYNTAX (a line without '=', a bad key, keys
 * out of order or repeated, missing final newline; d->line says where),
 * RBA_E_LIMIT (size, field count), RBA_E_NOMEM.
 */
int envrec_parse(const char *text, size_t n, struct envrec *out,
		 struct rba_detail *d);
void envrec_release(struct envrec *r);
/* The value of key, or NULL. */
const char *envrec_get(const struct envrec *r, const char *key);

enum envrec_change { ENVREC_CHANGED = 1, ENVREC_ADDED = 2, ENVREC_REMOVED = 3 };

struct envrec_delta {
	enum envrec_change change;
	const char *key;
	const char *old_value; /* NULL when added */
	const char *new_value; /* NULL when removed */
};

/*
 * Field-by-field differences from old to new, in key order: *out
 * (malloc'd, borrowing strings from the records) and *n.  0 or
 * RBA_E_NOMEM.
 */
int envrec_diff(const struct envrec *old, const struct envrec *new_,
		struct envrec_delta **out, size_t *n);

#endif
