/* envrec.c - capture, parse and diff environment records. */
#include "train/envrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "train/kernel.h"
#include "train/trainer.h"
#include "store/store.h"

#ifndef RBA_GIT_REV
#define RBA_GIT_REV "unknown"
#endif
#ifndef RBA_CC_ID
#define RBA_CC_ID "unknown"
#endif
#ifndef RBA_BUILD_FLAGS
#define RBA_BUILD_FLAGS "unknown"
#endif

struct kv {
	const char *key;
	char value[ENVREC_MAX_VALUE + 1];
};

static void
set(struct kv *kv, size_t *n, const char *key, const char *value)
{
	size_t j = 0;

	kv[*n].key = key;
	for (const char *s = value ? value : "unknown";
	     *s && j < ENVREC_MAX_VALUE; s++) {
		unsigned char c = (unsigned char)*s;
		kv[*n].value[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	/* Trailing spaces would not survive every editor or shell. */
	while (j > 0 && kv[*n].value[j - 1] == ' ')
		j--;
	kv[*n].value[j] = 0;
	if (j == 0)
		snprintf(kv[*n].value, sizeof(kv[*n].value), "unknown");
	(*n)++;
}

static int
cmp_kv(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

/* "model name" (x86) or a fallback; flags filtered to the relevant. */
static void
cpu_info(char *model, size_t msz, char *isa, size_t isz)
{
	static const char *const wanted[] = {
		"asimd",    "avx",	"avx2",	    "avx512bw", "avx512dq",
		"avx512f",  "avx512vl", "f16c",	    "fma",	"fp",
		"neon",	    "sse2",	"sse3",	    "sse4_1",	"sse4_2",
		"ssse3",    "sve",	"sve2",
	};
	char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int have_flags = 0;

	snprintf(model, msz, "unknown");
	snprintf(isa, isz, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':'), *v;
		size_t kl;
		if (colon == NULL)
			continue;
		v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = 0;
		kl = (size_t)(colon - line);
		while (kl > 0 && (line[kl - 1] == ' ' || line[kl - 1] == '\t'))
			kl--;
		line[kl] = 0;
		if (strcmp(line, "model name") == 0 && strcmp(model, "unknown") == 0)
			snprintf(model, msz, "%s", v);
		else if (strcmp(line, "CPU part") == 0 &&
			 strcmp(model, "unknown") == 0)
			snprintf(model, msz, "part %s", v);
		else if (!have_flags &&
			 (strcmp(line, "flags") == 0 ||
			  strcmp(line, "Features") == 0)) {
			size_t used = 0;
			have_flags = 1;
			isa[0] = 0;
			for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]);
			     i++) {
				char pad[64];
				char hay[8192 + 2];
				snprintf(pad, sizeof(pad), " %s ", wanted[i]);
				snprintf(hay, sizeof(hay), " %s ", v);
				if (strstr(hay, pad) == NULL)
					continue;
				used += (size_t)snprintf(isa + used,
							 used < isz ? isz - used : 0,
							 "%s%s", used ? " " : "",
							 wanted[i]);
			}
			if (used == 0)
				snprintf(isa, isz, "none");
		}
	}
	fclose(f);
}

static const char *
arch_name(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#elif defined(__i386__)
	return "i386";
#else
	return "unknown";
#endif
}

int
envrec_capture(enum pins_det_mode mode, unsigned threads, struct rba_buf *out)
{
	struct kv kv[24];
	size_t n = 0;
	char model[256], isa[512], num[32];
	char libc[64];

	cpu_info(model, sizeof(model), isa, sizeof(isa));
#ifdef __GLIBC__
	snprintf(libc, sizeof(libc), "glibc %s", gnu_get_libc_version());
#else
	snprintf(libc, sizeof(libc), "unknown");
#endif
	snprintf(num, sizeof(num), "%u", rebuild_abi_current());
	set(kv, &n, "abi.trainer", num);
	set(kv, &n, "build.cc", RBA_CC_ID);
	set(kv, &n, "build.flags", RBA_BUILD_FLAGS);
	set(kv, &n, "cpu.arch", arch_name());
	set(kv, &n, "cpu.isa", isa);
	set(kv, &n, "cpu.model", model);
	set(kv, &n, "determinism.mode", mode == PINS_DET_FAST ? "fast" : "strict");
	snprintf(num, sizeof(num), "%u", threads);
	set(kv, &n, "determinism.threads", num);
	set(kv, &n, "kernel.isa", kernel_strict_isa());
	set(kv, &n, "lib.libc", libc);
	set(kv, &n, "lib.libsodium", rba_sodium_version());
	set(kv, &n, "lib.libyaml", policy_yaml_version());
	set(kv, &n, "lib.lmdb", store_lmdb_version());
	set(kv, &n, "lib.openblas", kernel_blas_config());
	set(kv, &n, "lib.zstd", store_zstd_version());
	set(kv, &n, "openblas.corename", kernel_blas_corename());
	if (mode == PINS_DET_FAST) {
		if (kernel_fast(threads) != NULL)
			snprintf(num, sizeof(num), "%d", kernel_blas_threads());
		else
			snprintf(num, sizeof(num), "unavailable");
		set(kv, &n, "openblas.threads", num);
	} else {
		set(kv, &n, "openblas.threads", "unused");
	}
	set(kv, &n, "tool.revision", RBA_GIT_REV);
	set(kv, &n, "tool.version", RBA_TOOL_VERSION);
	qsort(kv, n, sizeof(kv[0]), cmp_kv);
	for (size_t i = 0; i < n; i++)
		rba_buf_printf(out, "%s=%s\n", kv[i].key, kv[i].value);
	return rba_buf_status(out);
}

const char *
envrec_code_revision(void)
{
	return RBA_TOOL_VERSION "+" RBA_GIT_REV;
}

void
envrec_digest(const char *text, size_t n, struct rba_digest *out)
{
	rba_digest_bytes(text, n, out);
}

void
envrec_release(struct envrec *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->f[i].key);
		free(r->f[i].value);
	}
	free(r->f);
	memset(r, 0, sizeof(*r));
}

static int
key_ok(const char *k, size_t n)
{
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_'))
			return 0;
	}
	return 1;
}

int
envrec_parse(const char *text, size_t n, struct envrec *out,
	     struct rba_detail *d)
{
	size_t pos = 0;
	unsigned long line = 0;

	memset(out, 0, sizeof(*out));
	if (n > ENVREC_MAX_BYTES)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"environment record over %u bytes",
				ENVREC_MAX_BYTES);
	if (n > 0 && text[n - 1] != '\n')
		return rba_fail(d, RBA_E_SYNTAX, NULL, 0, 0,
				"environment record does not end with a "
				"newline");
	out->f = calloc(ENVREC_MAX_FIELDS, sizeof(*out->f));
	if (out->f == NULL)
		return RBA_E_NOMEM;
	while (pos < n) {
		const char *l = text + pos;
		const char *nl = memchr(l, '\n', n - pos);
		const char *eq;
		size_t len = (size_t)(nl - l);
		struct envrec_field *f;
		line++;
		eq = memchr(l, '=', len);
		if (eq == NULL || !key_ok(l, (size_t)(eq - l)) ||
		    memchr(l, 0, len) != NULL) {
			envrec_release(out);
			return rba_fail(d, RBA_E_SYNTAX, NULL, line, 1,
					"not a key=value line");
		}
		if (out->n == ENVREC_MAX_FIELDS) {
			envrec_release(out);
			return rba_fail(d, RBA_E_LIMIT, NULL, line, 1,
					"more than %u fields",
					ENVREC_MAX_FIELDS);
		}
		f = &out->f[out->n];
		f->key = strndup(l, (size_t)(eq - l));
		f->value = strndup(eq + 1, (size_t)(nl - eq - 1));
		if (f->key == NULL || f->value == NULL) {
			out->n++;
			envrec_release(out);
			return RBA_E_NOMEM;
		}
		out->n++;
		if (out->n > 1 && strcmp(out->f[out->n - 2].key, f->key) >= 0) {
			envrec_release(out);
			return rba_fail(d, RBA_E_SYNTAX, NULL, line, 1,
					"keys out of order or repeated");
		}
		pos += len + 1;
	}
	return 0;
}

const char *
envrec_get(const struct envrec *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->f[i].key, key) == 0)
			return r->f[i].value;
	return NULL;
}

int
envrec_diff(const struct envrec *a, const struct envrec *b,
	    struct envrec_delta **out, size_t *n)
{
	struct envrec_delta *v = calloc(a->n + b->n + 1, sizeof(*v));
	size_t i = 0, j = 0, k = 0;

	*out = NULL;
	*n = 0;
	if (v == NULL)
		return RBA_E_NOMEM;
	/* Both sides are sorted: one merge pass. */
	while (i < a->n || j < b->n) {
		int c = i == a->n   ? 1
			: j == b->n ? -1
				    : strcmp(a->f[i].key, b->f[j].key);
		if (c < 0) {
			v[k++] = (struct envrec_delta){ ENVREC_REMOVED,
							a->f[i].key,
							a->f[i].value, NULL };
			i++;
		} else if (c > 0) {
			v[k++] = (struct envrec_delta){ ENVREC_ADDED,
							b->f[j].key, NULL,
							b->f[j].value };
			j++;
		} else {
			if (strcmp(a->f[i].value, b->f[j].value) != 0)
				v[k++] = (struct envrec_delta){
					ENVREC_CHANGED, a->f[i].key,
					a->f[i].value, b->f[j].value
				};
			i++;
			j++;
		}
	}
	*out = v;
	*n = k;
	return 0;
}
