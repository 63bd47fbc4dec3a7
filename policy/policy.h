/*
 * policy.h - pins and policy files (doc/design.md sections 5.1, 5.2):
 * loading with libyaml, validation, canonical form, config hash, and the
 * decision rule.
 * The formats are documented key by key in rebuild-audit-pins(5) and
 * rebuild-audit-policy(5).
 *
 * Every loader reports errors as FILE:LINE:COL (1-based, pointing at the
 * offending key or value) in a caller-owned struct rba_detail, with the
 * reason in d->reason (lower case, no trailing period, naming the key
 * path, e.g. "'train.lr' must be a number greater than 0") and the key
 * path (e.g. "train.lr", "decision.bands[1].below") in d->key.  Error
 * classes and their codes, the same for pins and policies:
 *
 *   RBA_E_LIMIT     file over POLICY_MAX_FILE, nesting over
 *                   POLICY_MAX_DEPTH, more than POLICY_MAX_NODES nodes,
 *                   a list or string over its cap
 *   RBA_E_ENCODING  invalid UTF-8
 *   RBA_E_SYNTAX    YAML syntax (libyaml's problem text), control
 *                   characters, anchors or aliases, tags, more than one
 *                   document, a key that is not a scalar
 *   RBA_E_SCHEMA    "empty file" (no YAML document: zero bytes, or only
 *                   blank lines and comments; the detail has the file
 *                   name and no position); unknown, duplicate or
 *                   missing key; wrong type (text
 *                   where a number is wanted, a list where a mapping is
 *                   wanted, a word outside an enumeration, ...)
 *   RBA_E_RANGE     a number of the right type outside its range
 *   RBA_E_NEWER     a schema of this kind newer than this tool reads
 *   RBA_E_NOMEM, or an errno from reading the file
 *
 * Scalars take their meaning from their key, not from their quoting:
 * 2 and "2" are the same label text, 0.02 and "2e-2" the same number.
 * Only a plain null (empty, ~, null) means "not given".  Numbers are
 * read in the C locale; nan, inf, hex, underscores, leading zeros and
 * overflow are refused; booleans are true or false.
 */
#ifndef RBA_POLICY_H
#define RBA_POLICY_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"

#define POLICY_MAX_FILE (1u << 20) /* bytes in a pins or policy file */
#define POLICY_MAX_DEPTH 8	   /* YAML nesting */
#define POLICY_MAX_NODES 4096	   /* YAML nodes (scalars, lists, maps) */
#define POLICY_MAX_STRING 256	   /* bytes in a column name, label, decision */
#define PINS_MAX_LIST 64	   /* entries in exclude/categorical */
#define PINS_MAX_LAYERS 16	   /* entries in hidden */
#define PINS_MAX_NAME 128	   /* bytes in a version name */
#define PINS_MAX_UNITS 4096	   /* units in one hidden layer */
#define PINS_MAX_EPOCHS 100000
#define PINS_MAX_BATCH 1048576
#define PINS_MAX_THREADS 256
#define PINS_MAX_TREES 10000	   /* gbdt boosting rounds */
#define PINS_MAX_DEPTH 16	   /* gbdt tree depth */
#define PINS_MAX_LEAVES 65536	   /* gbdt leaves in one tree */
#define PINS_MAX_BINS 256	   /* gbdt histogram bins per feature */
#define PINS_MAX_EVAL_ROWS 1000000000u /* eval.subset as a row count */

#define PINS_SCHEMA "rebuild-audit/pins/v1"
#define POLICY_SCHEMA "rebuild-audit/policy/v1"

enum pins_split_order { PINS_SPLIT_RANDOM = 1, PINS_SPLIT_TAIL = 2 };
enum pins_impute { PINS_IMPUTE_NONE = 0, PINS_IMPUTE_MEAN = 1,
		   PINS_IMPUTE_CONST = 2 };
#define PINS_MAX_MISSING 64 /* tokens in data.missing */
#define PINS_MAX_TOKEN 64   /* bytes in one missing token */
enum pins_optimizer { PINS_OPT_ADAMW = 1, PINS_OPT_SGD = 2 };
enum pins_activation { PINS_ACT_RELU = 1 };
/* mlp is 0 so that a zeroed record is the model every older file meant. */
enum pins_model_kind { PINS_MODEL_MLP = 0, PINS_MODEL_GBDT = 1 };
enum pins_det_mode { PINS_DET_STRICT = 1, PINS_DET_FAST = 2 };
enum pins_reduction { PINS_RED_MEAN = 1, PINS_RED_SUM = 2 };
/* all and validation both name the whole validation part; rows its
 * first subset_rows rows in split order. */
enum pins_subset { PINS_SUBSET_ALL = 1, PINS_SUBSET_VALIDATION = 2,
		   PINS_SUBSET_ROWS = 3 };

/*
 * The trainer (rebuild-audit-pins(5), TRAINER): builtin, this tool's own
 * (every pins file without a trainer: block), or exec, the user's own
 * code at a pinned git commit run in a sandbox (exec/exec.h).
 */
enum pins_trainer_kind { PINS_TRAINER_BUILTIN = 0, PINS_TRAINER_EXEC = 1 };
/* The artifact an exec trainer writes: an XGBoost JSON model (scored
 * natively once a loader for it is in; until then by trainer.score), or
 * any other bytes, scored only by trainer.score. */
enum pins_format { PINS_FORMAT_XGBOOST_JSON = 1, PINS_FORMAT_OPAQUE = 2 };
enum pins_param_type { PINS_PARAM_INT = 1, PINS_PARAM_NUM = 2,
		       PINS_PARAM_BOOL = 3, PINS_PARAM_STR = 4 };

#define PINS_MAX_ARGV 64	   /* entries in a command */
#define PINS_MAX_ARG 1024	   /* bytes in one argument, repository */
#define PINS_MAX_PARAMS 64	   /* trainer.params entries */
#define PINS_MAX_VARS 32	   /* trainer.environment.variables */
#define PINS_MAX_ARTIFACT_NAME 128 /* trainer.artifact */
#define PINS_DEFAULT_SECONDS 600
#define PINS_DEFAULT_MEMORY (UINT64_C(4) << 30)
#define PINS_DEFAULT_OUTPUT (UINT64_C(256) << 20)
#define PINS_DEFAULT_PROCESSES 512

struct pins_param {
	char *key;
	enum pins_param_type type;
	char *text;	/* INT: decimal digits; STR: the string */
	double num;	/* NUM */
	int b;		/* BOOL */
};

struct pins_trainer {
	enum pins_trainer_kind kind; /* default builtin */
	/* exec only (a builtin trainer has none of these) */
	char *repository;	/* a path or URL git reads */
	char *revision;		/* 40 lowercase hex digits */
	char **command;		/* argv, with placeholders */
	size_t ncommand;
	char *artifact;		/* file name the command writes */
	enum pins_format format;
	struct pins_param *params; /* sorted by key bytewise, distinct */
	size_t nparams;
	char **packages;	/* sorted, distinct Debian package names */
	size_t npackages;
	char **var_names, **var_values; /* sorted by name, distinct */
	size_t nvars;
	char **pass;		/* sorted names passed through from the
				 * tool's environment (recorded) */
	size_t npass;
	char **probe;		/* NULL: none */
	size_t nprobe;
	char **score;		/* the score command; NULL: none */
	size_t nscore;
	uint64_t seconds, memory, output; /* limits */
	uint64_t processes; /* limits: processes and threads at once */
};

/* Where a value sits in the text a record was parsed from. */
struct pins_pos {
	unsigned long line, col; /* 1-based; 0 when unknown */
};

/*
 * A pins record.  Strings are owned by the struct (freed by
 * policy_pins_free).  "has_*" say whether register has filled a field.
 * Comments give each field's range and its default when the file does
 * not give it.  Strings are valid UTF-8, without NUL, at most
 * POLICY_MAX_STRING bytes.
 */
struct pins {
	char *version;		/* required; policy_name_valid() */
	struct rba_digest snapshot; /* required */
	char *code_revision;	/* NULL until register */
	uint32_t trainer_abi;	/* 0 until register, then >= 1 */
	int has_environment;
	struct rba_digest environment;
	int has_artifact;
	struct rba_digest artifact;

	struct {
		char *label;	/* required */
		char *positive; /* NULL: multiclass (or not given) */
		char *id;	/* NULL: none */
		char **exclude;	/* sorted bytewise, no repeats, none is */
		size_t nexclude; /* the label or id; default [] */
		char **categorical; /* sorted bytewise, no repeats, none */
		size_t ncategorical; /* excluded, label or id; default [] */
		/*
		 * data.native: the categorical columns trees split on by
		 * level sets (one feature holding the level index) instead
		 * of one-hot; sorted bytewise, no repeats, each in
		 * categorical; default [] (model kind gbdt only).
		 */
		char **native;
		size_t nnative;
		int standardize; /* default 1 */
		/*
		 * data.missing: the field texts of a numeric column that
		 * mean a missing value, sorted bytewise, distinct (the
		 * empty field is ""); missing_declared 0: the default, the
		 * empty field alone (pins_missing_tokens gives it).
		 */
		int missing_declared;
		char **missing;
		size_t nmissing;
		/* data.impute (model kind mlp only): none (default), the
		 * training mean of the column, or impute_value. */
		enum pins_impute impute;
		double impute_value;
		double split_validation; /* (0, 1), default 0.25 */
		enum pins_split_order split_order; /* default random */
		uint64_t split_seed;	/* default 0 */
	} data;
	struct {
		enum pins_model_kind kind; /* default mlp */
		/* mlp only (refused with kind gbdt) */
		uint32_t hidden[PINS_MAX_LAYERS];
		size_t nhidden;	/* 0: logistic regression; default 0 */
		enum pins_activation activation; /* default relu */
		double dropout; /* [0, 1), default 0 */
		/* gbdt only (refused with kind mlp); defaults as XGBoost's */
		struct {
			uint32_t trees;	    /* rounds, 1..PINS_MAX_TREES, 100 */
			uint32_t max_depth; /* 1..PINS_MAX_DEPTH, default 6 */
			uint32_t max_leaves; /* 0 (no cap) or 2..PINS_MAX_LEAVES */
			double learning_rate; /* (0, 1], default 0.3 */
			double min_child_weight; /* >= 0, default 1 */
			double lambda;	    /* >= 0, default 1 */
			double gamma;	    /* >= 0, default 0 */
			uint32_t max_bins;  /* 2..PINS_MAX_BINS, default 256 */
			double subsample;   /* (0, 1], default 1 */
			double colsample;   /* (0, 1], default 1 */
		} gbdt;
	} model;
	/* With model kind gbdt only seed may be given (the others are
	 * refused, their defaults kept and not written out). */
	struct {
		uint64_t seed;	     /* default 0 */
		uint32_t epochs;     /* 1..PINS_MAX_EPOCHS, default 20 */
		uint32_t batch_size; /* 1..PINS_MAX_BATCH, default 128 */
		enum pins_optimizer optimizer; /* default adamw */
		double lr;	     /* > 0, default 0.001 */
		double weight_decay; /* >= 0, default 0.01 (adamw), 0 (sgd) */
		double betas[2];     /* adamw: [0, 1), default 0.9, 0.999 */
		double eps;	     /* adamw: > 0, default 1e-8 */
		double momentum;     /* sgd: [0, 1), default 0 */
	} train;
	struct {
		enum pins_subset subset;       /* default all */
		uint64_t subset_rows; /* subset rows: 1..PINS_MAX_EVAL_ROWS */
		enum pins_reduction reduction; /* default mean */
		int dropout;	    /* 0: off (default), 1: on (the model's
				     * rate, masks keyed by train.seed) */
		double input_scale; /* > 0, default 1.0 */
	} eval;
	struct {
		enum pins_det_mode mode; /* default strict */
		uint32_t threads; /* 1..PINS_MAX_THREADS, default 1 */
	} determinism;
	struct pins_trainer trainer;
	/*
	 * Where the parsed text gave a value: the scalar after "label:",
	 * "id:", "positive:", "code_revision:" or "environment:", or a list
	 * entry, so that a column the snapshot lacks, or a declared value
	 * this machine cannot honour, is reported at FILE:LINE:COL of the
	 * pins.  file is the name given to the parser (owned, freed with
	 * the record; policy_pins_dup copies it); NULL, and every position
	 * 0, for a record that was not parsed (or a key not given).  Not
	 * part of the canonical form or the config hash.
	 */
	struct {
		char *file;
		struct pins_pos label, id, positive;
		struct pins_pos code_revision, environment;
		struct pins_pos revision, repository, command;
		struct pins_pos params[PINS_MAX_PARAMS]; /* trainer.params[i] */
		struct pins_pos exclude[PINS_MAX_LIST];	    /* data.exclude[i] */
		struct pins_pos categorical[PINS_MAX_LIST]; /* data.categorical[i] */
		struct pins_pos native_key; /* data.native */
		struct pins_pos native[PINS_MAX_LIST];	    /* data.native[i] */
		struct pins_pos impute; /* data.impute */
	} src;
};

/*
 * The missing-value tokens p declares (data.missing), or the default
 * when it declares none: the empty field alone.  *n gets the count.
 */
const char *const *pins_missing_tokens(const struct pins *p, size_t *n);

/* Whether p declares column name native (data.native). */
int pins_is_native(const struct pins *p, const char *name);

/*
 * Reads at most POLICY_MAX_FILE + 1 bytes of path ("-": standard input)
 * into a malloc'd, NUL-terminated buffer (*out, *len not counting the
 * NUL), so that a parse of it reports an oversized file with the place
 * where it went over the cap.  0, RBA_E_NOMEM or an errno; d gets path.
 */
int policy_file_read(const char *path, uint8_t **out, size_t *len,
		     struct rba_detail *d);

/*
 * Loads (policy_file_read) and validates a pins file; parse validates n
 * bytes of text, naming the file name in details.  0, or any code listed
 * at the top of this header; d is cleared first.  On success *out is
 * owned by the caller (policy_pins_free); on error *out is NULL.
 */
int policy_pins_load(const char *path, struct pins **out, struct rba_detail *d);
int policy_pins_parse(const void *text, size_t n, const char *name,
		      struct pins **out, struct rba_detail *d);
/* NULL allowed. */
void policy_pins_free(struct pins *p);
/* A deep copy, or NULL on allocation failure. */
struct pins *policy_pins_dup(const struct pins *p);

/*
 * Appends the canonical YAML text of the whole record (rebuild-audit-pins(5),
 * CANONICAL FORM): block mappings in schema order, every default written
 * out, unfilled register fields as null, lists of scalars in flow style,
 * numbers in the shortest form that reads back as the same double.  The
 * text parses back to an identical record.  p must be a valid record (as
 * from the parser, or with register's fields filled).  Allocation failure
 * is reported by rba_buf_status(out).
 */
void policy_pins_canonical(const struct pins *p, struct rba_buf *out);
/*
 * SHA-256 of the canonical text of data, model, train and determinism
 * (those four blocks of policy_pins_canonical, in that order): not of
 * schema, version, snapshot, eval or the fields register fills.  Needs
 * no allocation.
 */
void policy_pins_config_hash(const struct pins *p, struct rba_digest *out);

/*
 * The canonical JSON of trainer.params (keys sorted bytewise, no
 * whitespace, integers as written, other numbers as common/json.h
 * writes them), followed by one newline: the file {params} names.
 * Allocation failure: rba_buf_status(out).
 */
void policy_pins_params_json(const struct pins *p, struct rba_buf *out);

/* 1 when the pins name an exec trainer. */
int policy_pins_is_exec(const struct pins *p);

/*
 * 1 when name is a valid version name: 1-PINS_MAX_NAME bytes of
 * [A-Za-z0-9._-], not starting with '.' or '-'.
 */
int policy_name_valid(const char *name);

/* Policy: decision bands or argmax, tolerance, near-threshold rule. */
#define POLICY_MAX_BANDS 32
struct policy_band {
	int has_below;	/* every band but the last; the last has none */
	double below;	/* band applies while score < below; (0, 1] */
	char *decision; /* non-empty */
};
/*
 * Reason statements (statements: in the file, rebuild-audit-policy(5)):
 * the sentence an adverse-action notice uses for an input column, or
 * for one level of a categorical column.  level NULL: the column's
 * statement for any value ("*" in a mapping, or a plain string).
 */
#define POLICY_STATEMENT_MAX 512  /* bytes in one statement */
#define POLICY_MAX_STATEMENTS 2048 /* statements in a policy */
struct policy_statement {
	char *column; /* non-empty, at most POLICY_MAX_STRING bytes */
	char *level;  /* NULL for the column's own */
	char *text;   /* one line, non-empty */
};
struct policy {
	int argmax; /* decision: {rule: argmax} (multiclass); nbands is 0 */
	struct policy_band bands[POLICY_MAX_BANDS];
	size_t nbands;		/* 1..POLICY_MAX_BANDS unless argmax */
	double max_score_delta; /* >= 0, default 0 */
	uint64_t max_flips;	/* default 0 */
	double near_margin;	/* >= 0, default 0 */
	int near_require_bits;	/* default 0 */
	uint64_t min_near_cases; /* default 0 */
	struct rba_digest digest; /* SHA-256 of the file's exact bytes */
	char *text;		  /* the file's exact bytes, NUL-terminated */
	size_t text_len;
	/* statements in file order; none (0) when the file has none */
	struct policy_statement *statements;
	size_t nstatements;
};

/*
 * The statement for column with value (the level of a categorical
 * column, or a number's text): the level's own, else the column's;
 * NULL when the policy has none for it.  Borrowed from p.
 */
const char *policy_statement(const struct policy *p, const char *column,
			     const char *value);

/*
 * Loads (policy_file_read) and validates a policy file; parse validates n
 * bytes of text.  Codes as for pins; d is cleared first.  On success *out
 * is owned by the caller (policy_free) and keeps a copy of the exact
 * bytes and their digest; on error *out is NULL.
 */
int policy_load(const char *path, struct policy **out, struct rba_detail *d);
int policy_parse(const void *text, size_t n, const char *name,
		 struct policy **out, struct rba_detail *d);
/* NULL allowed. */
void policy_free(struct policy *p);
/*
 * Appends the canonical YAML text (rebuild-audit-policy(5)); it parses
 * back to an identical policy (apart from text and digest, which are of
 * the bytes actually read).  Allocation failure: rba_buf_status(out).
 */
void policy_canonical(const struct policy *p, struct rba_buf *out);

/*
 * The decision for a score under bands: the first band whose below is
 * above score (or that has no below), so a score exactly at a band's
 * below belongs to the next band.  *edge_dist (NULL allowed) gets the
 * distance to the nearest band edge (fabs(score - below) minimized over
 * bands with a below; +inf when there is none).  Returns the decision
 * text (borrowed from p, valid until policy_free), or NULL (and +inf)
 * for an argmax policy or a NaN score.
 */
const char *policy_decide(const struct policy *p, double score,
			  double *edge_dist);

/*
 * policy_decide's decision as its band: the index in p->bands of the
 * band whose decision it is, or -1 where it is NULL; *edge_dist as
 * there.  Inline, for a pass that decides every case of a sample;
 * policy_decide is this.
 */
static inline long
policy_decide_band(const struct policy *p, double score, double *edge_dist)
{
	long band = -1;
	double best = INFINITY;

	if (edge_dist != NULL)
		*edge_dist = INFINITY;
	if (p->argmax || isnan(score))
		return -1;
	for (size_t i = 0; i < p->nbands; i++) {
		const struct policy_band *b = &p->bands[i];
		if (!b->has_below) {
			if (band < 0)
				band = (long)i;
			continue;
		}
		if (fabs(score - b->below) < best)
			best = fabs(score - b->below);
		if (band < 0 && score < b->below)
			band = (long)i;
	}
	if (edge_dist != NULL)
		*edge_dist = best;
	return band;
}

/*
 * The band edge (a band's below) nearest to score: NaN for an argmax
 * policy or when no band has a below.  Ties keep the first such band.
 */
double policy_nearest_edge(const struct policy *p, double score);

/*
 * The decision of an argmax policy over n class probabilities: the index
 * of the largest (the lowest index among equals).  *edge_dist (NULL
 * allowed) gets half the gap between the largest and the second largest,
 * which for two classes is the distance of either probability to 0.5,
 * as with a band edge at 0.5 (+inf when n is 1).  Returns SIZE_MAX (and
 * +inf) when n is 0 or a probability is NaN.  p may be a band policy:
 * the rule does not depend on it.
 */
size_t policy_decide_argmax(const struct policy *p, const double *probs,
			    size_t n, double *edge_dist);

/*
 * Whether a is at least as strict as b in every term that decides a
 * verdict: the same decision rule and bands (every edge and decision),
 * a score tolerance and a flip tolerance no larger, a near-threshold
 * margin no smaller, bits near the threshold required when b requires
 * them, and min_near_cases no smaller.  1 yes; 0 no, and why (cap
 * bytes, may be NULL) names the first term where a is looser or other.
 */
int policy_as_strict(const struct policy *a, const struct policy *b,
		     char *why, size_t cap);

enum policy_file_kind { POLICY_KIND_UNKNOWN = 0, POLICY_KIND_PINS, POLICY_KIND_POLICY };
/*
 * Reads the top-level schema: key of a file to say what it is (without
 * validating the rest; the YAML only needs to be readable up to that
 * key).  Any "rebuild-audit/pins/..." is POLICY_KIND_PINS and
 * "rebuild-audit/policy/..." POLICY_KIND_POLICY, so that the loader can
 * say "newer" for a later version.  0 with *kind set (UNKNOWN when there
 * is no such key), or RBA_E_NOMEM.
 */
int policy_file_kind(const void *text, size_t n, enum policy_file_kind *kind);

/*
 * Checks that n bytes of text are one YAML document within every cap
 * (size, UTF-8, syntax, anchors, tags, nesting, nodes), without any
 * schema: the error a loader would report first for such a file.  0 or
 * the codes above; d is cleared first.
 */
int policy_yaml_check(const void *text, size_t n, const char *name,
		      struct rba_detail *d);

/* Runtime version of libyaml. */
const char *policy_yaml_version(void);

#endif
