/*
 * policy.h - pins and policy files (DESIGN 5.1, 5.2): loading with
 * libyaml, validation, canonical form, config hash, and the decision rule.
 *
 * Every loader reports errors as FILE:LINE:COL (1-based, pointing at the
 * offending key or value) in a caller-owned struct rba_detail, with the
 * reason in d->reason and the key path (e.g. "train.lr") in d->key.
 */
#ifndef RBA_POLICY_H
#define RBA_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"

#define POLICY_MAX_FILE (1u << 20) /* bytes in a pins or policy file */
#define POLICY_MAX_DEPTH 8	   /* YAML nesting */
#define PINS_MAX_LIST 64	   /* entries in hidden/exclude/categorical */
#define PINS_MAX_LAYERS 16

enum pins_split_order { PINS_SPLIT_RANDOM = 1, PINS_SPLIT_TAIL = 2 };
enum pins_optimizer { PINS_OPT_ADAMW = 1, PINS_OPT_SGD = 2 };
enum pins_activation { PINS_ACT_RELU = 1 };
enum pins_det_mode { PINS_DET_STRICT = 1, PINS_DET_FAST = 2 };
enum pins_reduction { PINS_RED_MEAN = 1, PINS_RED_SUM = 2 };
enum pins_subset { PINS_SUBSET_ALL = 1, PINS_SUBSET_VALIDATION = 2 };

/*
 * A pins record.  Strings are owned by the struct (freed by
 * policy_pins_free).  "has_*" say whether register has filled a field.
 */
struct pins {
	char *version;		/* required */
	struct rba_digest snapshot; /* required */
	char *code_revision;	/* NULL until register */
	uint32_t trainer_abi;	/* 0 until register */
	int has_environment;
	struct rba_digest environment;
	int has_artifact;
	struct rba_digest artifact;

	struct {
		char *label;	/* required */
		char *positive; /* NULL: multiclass (or not given) */
		char *id;	/* NULL: none */
		char **exclude;
		size_t nexclude;
		char **categorical;
		size_t ncategorical;
		int standardize; /* default 1 */
		double split_validation; /* (0, 1), default 0.25 */
		enum pins_split_order split_order; /* default random */
		uint64_t split_seed;	/* default 0 */
	} data;
	struct {
		uint32_t hidden[PINS_MAX_LAYERS]; /* model.kind is always mlp */
		size_t nhidden;	/* 0: logistic regression */
		enum pins_activation activation;
		double dropout; /* [0, 1) */
	} model;
	struct {
		uint64_t seed;
		uint32_t epochs;     /* >= 1 */
		uint32_t batch_size; /* >= 1 */
		enum pins_optimizer optimizer;
		double lr;	     /* > 0 */
		double weight_decay; /* >= 0 */
		double betas[2];     /* adamw: [0, 1) */
		double eps;	     /* > 0 */
		double momentum;     /* sgd: [0, 1) */
	} train;
	struct {
		enum pins_subset subset;
		enum pins_reduction reduction;
		int dropout;	    /* 0: off (the only value allowed today) */
		double input_scale; /* > 0, default 1.0 */
	} eval;
	struct {
		enum pins_det_mode mode;
		uint32_t threads; /* >= 1 */
	} determinism;
};

/*
 * Loads and validates a pins file.  0, or RBA_E_SYNTAX (YAML syntax,
 * alias/anchor), RBA_E_SCHEMA (unknown/duplicate/missing key, wrong type),
 * RBA_E_RANGE, RBA_E_LIMIT (file size, nesting), RBA_E_ENCODING, errno.
 * On success *out is owned by the caller (policy_pins_free).
 */
int policy_pins_load(const char *path, struct pins **out, struct rba_detail *d);
int policy_pins_parse(const void *text, size_t n, const char *name,
		      struct pins **out, struct rba_detail *d);
void policy_pins_free(struct pins *p);
/* A deep copy, or NULL on allocation failure. */
struct pins *policy_pins_dup(const struct pins *p);

/* Appends the canonical YAML text of the whole record. */
void policy_pins_canonical(const struct pins *p, struct rba_buf *out);
/* SHA-256 of the canonical form of data, model, train and determinism. */
void policy_pins_config_hash(const struct pins *p, struct rba_digest *out);

/* Policy: decision bands or argmax, tolerance, near-threshold rule. */
#define POLICY_MAX_BANDS 32
struct policy_band {
	int has_below;
	double below;	/* band applies while score < below */
	char *decision;
};
struct policy {
	int argmax; /* decision: {rule: argmax} (multiclass) */
	struct policy_band bands[POLICY_MAX_BANDS];
	size_t nbands;
	double max_score_delta; /* >= 0 */
	uint64_t max_flips;
	double near_margin;	/* >= 0 */
	int near_require_bits;
	uint64_t min_near_cases;
	struct rba_digest digest; /* SHA-256 of the file's exact bytes */
	char *text;		  /* the file's exact bytes, NUL-terminated */
	size_t text_len;
};

int policy_load(const char *path, struct policy **out, struct rba_detail *d);
int policy_parse(const void *text, size_t n, const char *name,
		 struct policy **out, struct rba_detail *d);
void policy_free(struct policy *p);
void policy_canonical(const struct policy *p, struct rba_buf *out);

/*
 * The decision for a score under bands: the first band whose below is
 * above score (or that has no below).  *edge_dist gets the distance to the
 * nearest band edge (fabs(score - below) minimized over bands with a
 * below; +inf when there is none).  Returns the decision text (borrowed
 * from p).  Argmax policies: use policy_decide_argmax.
 */
const char *policy_decide(const struct policy *p, double score,
			  double *edge_dist);

enum policy_file_kind { POLICY_KIND_UNKNOWN = 0, POLICY_KIND_PINS, POLICY_KIND_POLICY };
/* Reads the schema: key of a file to say what it is (without validating). */
int policy_file_kind(const void *text, size_t n, enum policy_file_kind *kind);

/* Runtime version of libyaml. */
const char *policy_yaml_version(void);

#endif
