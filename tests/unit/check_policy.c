/*
 * check_policy.c - pins and policy files: loading, every error class with
 * its exact position, canonical form, config hash, the decision rule, and
 * the check command over the invalid corpus.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"
#include "policy/policy.h"
#include "policy/ydoc.h"
#include "tests/unit/suites.h"

#define SNAP "sha256:9a5fb32561e18f48dbbe9b109aa7e02b59539569fa95226708a4b5b3be86dee0"
#define HEAD "schema: rebuild-audit/pins/v1\nversion: v1\nsnapshot: " SNAP "\n"
#define PHEAD "schema: rebuild-audit/policy/v1\n"


/* An exec trainer with every key (rebuild-audit-pins(5), TRAINER). */
#define COMMIT "0123456789abcdef0123456789abcdef01234567"
#define EXEC_HEAD HEAD "data: {label: c}\n"
static const char exec_pins[] =
	EXEC_HEAD
	"train: {seed: 3}\n"
	"determinism: {threads: 2}\n"
	"trainer:\n"
	"  kind: exec\n"
	"  repository: /srv/git/credit.git\n"
	"  revision: " COMMIT "\n"
	"  command: [/usr/bin/python3, train.py, \"{snapshot}\", \"{params}\", \"{artifact}\"]\n"
	"  artifact: model.json\n"
	"  format: xgboost-json\n"
	"  params: {max_depth: 4, eta: 0.3, objective: \"binary:logistic\", hist: true, n: \"7\"}\n"
	"  environment:\n"
	"    packages: [python3-xgboost, python3-numpy]\n"
	"    variables: {OMP_NUM_THREADS: \"1\", A_B: x}\n"
	"    pass: [ATEN_CPU_CAPABILITY]\n"
	"    probe: [/usr/bin/python3, -c, \"print(1)\"]\n"
	"  limits: {seconds: 60, memory: 1073741824, output: 1048576}\n"
	"  score: {command: [/usr/bin/python3, score.py, \"{artifact}\", \"{cases}\", \"{scores}\"]}\n";

/* Every key given, block style: the base of the config-hash edits. */
static const char full_pins[] =
	HEAD
	"data:\n"
	"  label: class\n"
	"  positive: \"2\"\n"
	"  id: id\n"
	"  exclude: [telephone]\n"
	"  categorical: [purpose, housing]\n"
	"  standardize: true\n"
	"  split:\n"
	"    validation: 0.25\n"
	"    order: random\n"
	"    seed: 0\n"
	"model:\n"
	"  kind: mlp\n"
	"  hidden: [32, 32]\n"
	"  activation: relu\n"
	"  dropout: 0.3\n"
	"train:\n"
	"  seed: 0\n"
	"  epochs: 20\n"
	"  batch_size: 128\n"
	"  optimizer: adamw\n"
	"  lr: 0.02\n"
	"  weight_decay: 0.003\n"
	"  betas: [0.9, 0.999]\n"
	"  eps: 1.0e-8\n"
	"eval:\n"
	"  subset: all\n"
	"  reduction: mean\n"
	"  dropout: off\n"
	"  input_scale: 1.0\n"
	"determinism:\n"
	"  mode: strict\n"
	"  threads: 1\n";

/* The canonical text of the least a pins file may say. */
static const char minimal_pins[] = HEAD "data:\n  label: class\n";
static const char minimal_canonical[] =
	"schema: rebuild-audit/pins/v1\n"
	"version: v1\n"
	"snapshot: " SNAP "\n"
	"code_revision: null\n"
	"trainer_abi: null\n"
	"environment: null\n"
	"artifact: null\n"
	"data:\n"
	"  label: class\n"
	"  positive: null\n"
	"  id: null\n"
	"  exclude: []\n"
	"  categorical: []\n"
	"  standardize: true\n"
	"  split:\n"
	"    validation: 0.25\n"
	"    order: random\n"
	"    seed: 0\n"
	"model:\n"
	"  kind: mlp\n"
	"  hidden: []\n"
	"  activation: relu\n"
	"  dropout: 0.0\n"
	"train:\n"
	"  seed: 0\n"
	"  epochs: 20\n"
	"  batch_size: 128\n"
	"  optimizer: adamw\n"
	"  lr: 0.001\n"
	"  weight_decay: 0.01\n"
	"  betas: [0.9, 0.999]\n"
	"  eps: 1.0e-8\n"
	"eval:\n"
	"  subset: all\n"
	"  reduction: mean\n"
	"  dropout: off\n"
	"  input_scale: 1.0\n"
	"determinism:\n"
	"  mode: strict\n"
	"  threads: 1\n";

static const char credit_canonical[] =
	"schema: rebuild-audit/policy/v1\n"
	"decision:\n"
	"  bands:\n"
	"    - below: 0.3\n"
	"      decision: approve\n"
	"    - below: 0.5\n"
	"      decision: refer\n"
	"    - decision: decline\n"
	"tolerance:\n"
	"  max_score_delta: 0.0005\n"
	"  max_flips: 0\n"
	"near_threshold:\n"
	"  margin: 0.001\n"
	"  require_bits: true\n"
	"evidence:\n"
	"  min_near_cases: 1\n";

static void
setup(void)
{
	ck_assert_int_eq(rba_crypto_init(), 0);
}

static uint8_t *
slurp(const char *path, size_t *n)
{
	uint8_t *p;
	struct rba_detail d;

	ck_assert_int_eq(policy_file_read(path, &p, n, &d), 0);
	return p;
}

static struct pins *
pins_ok(const char *text)
{
	struct rba_detail d;
	struct pins *p = NULL;
	int err = policy_pins_parse(text, strlen(text), "t.yaml", &p, &d);

	ck_assert_msg(err == 0, "unexpected error %d at %lu:%lu: %s", err, d.line,
		      d.col, d.reason);
	ck_assert_ptr_nonnull(p);
	return p;
}

static char *
pins_text(const struct pins *p)
{
	struct rba_buf b;
	size_t n;

	rba_buf_init(&b);
	policy_pins_canonical(p, &b);
	rba_buf_cstr(&b);
	ck_assert_int_eq(rba_buf_status(&b), 0);
	return (char *)rba_buf_steal(&b, &n);
}

static void
pins_hash(const char *text, struct rba_digest *h)
{
	struct pins *p = pins_ok(text);

	policy_pins_config_hash(p, h);
	policy_pins_free(p);
}

/* A copy of s with its one occurrence of from replaced by to. */
static char *
edit(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	char *out;

	ck_assert_msg(at != NULL, "no '%s' in the base text", from);
	ck_assert_msg(strstr(at + 1, from) == NULL, "'%s' twice", from);
	out = malloc(strlen(s) - strlen(from) + strlen(to) + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, s, (size_t)(at - s));
	strcpy(out + (at - s), to);
	strcat(out, at + strlen(from));
	return out;
}

/* ---- valid pins ------------------------------------------------------- */

START_TEST(test_pins_fixture_fields)
{
	struct rba_detail d;
	struct rba_digest snap;
	struct pins *p;

	ck_assert_int_eq(policy_pins_load(FIXTURES "/pins/example-block.yaml", &p, &d), 0);
	ck_assert_int_eq(rba_digest_parse(SNAP, &snap), 0);
	ck_assert_str_eq(p->version, "credit-2026-11");
	ck_assert(rba_digest_equal(&p->snapshot, &snap));
	ck_assert_ptr_null(p->code_revision);
	ck_assert_uint_eq(p->trainer_abi, 0);
	ck_assert_int_eq(p->has_environment, 0);
	ck_assert_int_eq(p->has_artifact, 0);
	ck_assert_str_eq(p->data.label, "class");
	ck_assert_str_eq(p->data.positive, "2");
	ck_assert_str_eq(p->data.id, "id");
	ck_assert_uint_eq(p->data.nexclude, 0);
	ck_assert_uint_eq(p->data.ncategorical, 13);
	/* sorted bytewise whatever the listing order */
	ck_assert_str_eq(p->data.categorical[0], "checking_status");
	ck_assert_str_eq(p->data.categorical[12], "telephone");
	ck_assert_int_eq(p->data.standardize, 1);
	ck_assert(p->data.split_validation == 0.25);
	ck_assert_int_eq(p->data.split_order, PINS_SPLIT_RANDOM);
	ck_assert_uint_eq(p->model.nhidden, 2);
	ck_assert_uint_eq(p->model.hidden[0], 32);
	ck_assert_uint_eq(p->model.hidden[1], 32);
	ck_assert_int_eq(p->model.activation, PINS_ACT_RELU);
	ck_assert(p->model.dropout == 0.3);
	ck_assert_uint_eq(p->train.seed, 0);
	ck_assert_uint_eq(p->train.epochs, 20);
	ck_assert_uint_eq(p->train.batch_size, 128);
	ck_assert_int_eq(p->train.optimizer, PINS_OPT_ADAMW);
	ck_assert(p->train.lr == 0.02);
	ck_assert(p->train.weight_decay == 0.003);
	ck_assert(p->train.betas[0] == 0.9 && p->train.betas[1] == 0.999);
	ck_assert(p->train.eps == 1e-8);
	ck_assert_int_eq(p->eval.subset, PINS_SUBSET_ALL);
	ck_assert_int_eq(p->eval.reduction, PINS_RED_MEAN);
	ck_assert_int_eq(p->eval.dropout, 0);
	ck_assert(p->eval.input_scale == 1.0);
	ck_assert_int_eq(p->determinism.mode, PINS_DET_STRICT);
	ck_assert_uint_eq(p->determinism.threads, 1);
	policy_pins_free(p);
	policy_pins_free(NULL);
}
END_TEST

START_TEST(test_pins_defaults_canonical)
{
	struct pins *p = pins_ok(minimal_pins);
	char *text = pins_text(p);

	ck_assert_str_eq(text, minimal_canonical);
	ck_assert_ptr_null(p->data.positive);
	ck_assert_ptr_null(p->data.id);
	ck_assert_uint_eq(p->model.nhidden, 0);
	ck_assert(p->train.momentum == 0);
	free(text);
	policy_pins_free(p);

	/* sgd: its own keys, and no weight decay unless given */
	p = pins_ok(HEAD "data: {label: class}\ntrain: {optimizer: sgd, momentum: 0.9}\n");
	ck_assert_int_eq(p->train.optimizer, PINS_OPT_SGD);
	ck_assert(p->train.weight_decay == 0);
	ck_assert(p->train.momentum == 0.9);
	text = pins_text(p);
	ck_assert_ptr_nonnull(strstr(text, "  optimizer: sgd\n  lr: 0.001\n"
					   "  weight_decay: 0.0\n  momentum: 0.9\n"
					   "eval:\n"));
	free(text);
	policy_pins_free(p);

	/* missing tokens: the default is not written, others are, sorted */
	p = pins_ok(HEAD "data: {label: class, missing: [\"\"]}\n");
	text = pins_text(p);
	ck_assert_str_eq(text, minimal_canonical);
	free(text);
	policy_pins_free(p);
	p = pins_ok(HEAD "data: {label: class, missing: [NA, \"?\", \"\"]}\n");
	text = pins_text(p);
	ck_assert_ptr_nonnull(strstr(text, "  missing:\n    - \"\"\n    - \"?\"\n"
					   "    - NA\n  standardize:"));
	{
		struct pins *q = pins_ok(text);
		char *t2 = pins_text(q);
		ck_assert_str_eq(t2, text);
		free(t2);
		policy_pins_free(q);
	}
	free(text);
	policy_pins_free(p);
	p = pins_ok(HEAD "data: {label: class, missing: []}\n");
	text = pins_text(p);
	ck_assert_ptr_nonnull(strstr(text, "  missing: []\n"));
	free(text);
	policy_pins_free(p);
	p = pins_ok(HEAD "data: {label: class, impute: -1.5}\n");
	ck_assert_int_eq(p->data.impute, PINS_IMPUTE_CONST);
	text = pins_text(p);
	ck_assert_ptr_nonnull(strstr(text, "  impute: -1.5\n"));
	free(text);
	policy_pins_free(p);

	/* explicit nulls are the defaults */
	p = pins_ok(HEAD "data:\n  label: class\n  positive: ~\n  id: null\n  exclude:\n"
			 "  split:\nmodel:\ntrain: null\neval: ~\ndeterminism:\n");
	text = pins_text(p);
	ck_assert_str_eq(text, minimal_canonical);
	free(text);
	policy_pins_free(p);
}
END_TEST

START_TEST(test_pins_canonical_strings)
{
	struct pins *p = pins_ok(
		HEAD "data:\n  label: \"risk class\"\n  positive: 2\n"
		     "  id: 'true'\n  exclude: [\"a,b\", \"#c\", \"x: y\", \"\\u00e9t\\u00e9\", "
		     "\"tab\\there\", \"q\\\"uote\", \"back\\\\slash\", \"line\\u2028sep\", "
		     "\"-dash\", \"null\", \"Yes\", \"_ok.name/x-1\"]\n");
	char *text = pins_text(p);

	ck_assert_ptr_nonnull(strstr(text, "  label: \"risk class\"\n"
					   "  positive: \"2\"\n"
					   "  id: \"true\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"#c\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"-dash\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"Yes\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"a,b\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"back\\\\slash\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"line\\u2028sep\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"null\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"q\\\"uote\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"tab\\there\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"x: y\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - _ok.name/x-1\n"));
	ck_assert_ptr_nonnull(strstr(text, "    - \"\xc3\xa9t\xc3\xa9\"\n"));
	free(text);
	policy_pins_free(p);
}
END_TEST

/* parse(canonical(p)) has the same canonical text and the same fields. */
static void
assert_round_trip(const struct pins *p)
{
	char *t1 = pins_text(p), *t2;
	struct pins *q = pins_ok(t1);
	struct rba_digest h1, h2;
	size_t i;

	t2 = pins_text(q);
	ck_assert_str_eq(t1, t2);
	ck_assert_str_eq(p->version, q->version);
	ck_assert(memcmp(&p->snapshot, &q->snapshot, sizeof(p->snapshot)) == 0);
	ck_assert_uint_eq(p->trainer_abi, q->trainer_abi);
	ck_assert_int_eq(p->has_artifact, q->has_artifact);
	ck_assert_int_eq(p->has_environment, q->has_environment);
	ck_assert_uint_eq(p->data.nexclude, q->data.nexclude);
	for (i = 0; i < p->data.nexclude; i++)
		ck_assert_str_eq(p->data.exclude[i], q->data.exclude[i]);
	ck_assert(memcmp(&p->model, &q->model, sizeof(p->model)) == 0);
	ck_assert(memcmp(&p->train, &q->train, sizeof(p->train)) == 0);
	ck_assert(memcmp(&p->eval, &q->eval, sizeof(p->eval)) == 0);
	ck_assert(memcmp(&p->determinism, &q->determinism,
			 sizeof(p->determinism)) == 0);
	policy_pins_config_hash(p, &h1);
	policy_pins_config_hash(q, &h2);
	ck_assert(rba_digest_equal(&h1, &h2));
	free(t1);
	free(t2);
	policy_pins_free(q);
}

START_TEST(test_pins_round_trip)
{
	static const char *const files[] = {"example-block.yaml", "example-flow.yaml",
					    "example-minimal.yaml"};
	struct rba_detail d;
	struct pins *p;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), FIXTURES "/pins/%s", files[i]);
		ck_assert_int_eq(policy_pins_load(path, &p, &d), 0);
		assert_round_trip(p);
		policy_pins_free(p);
	}
	p = pins_ok(full_pins);
	assert_round_trip(p);
	/* what register fills, then prints and stores */
	p->code_revision = strdup("0.1.0+3f2a9c1b7d4e-dirty \"x\"");
	p->trainer_abi = 1;
	p->has_environment = 1;
	rba_digest_bytes("env", 3, &p->environment);
	p->has_artifact = 1;
	rba_digest_bytes("art", 3, &p->artifact);
	p->train.lr = 0.1 + 0.2; /* 0.30000000000000004 */
	p->train.seed = UINT64_MAX;
	p->data.split_seed = 12345678901234567890u;
	p->model.dropout = 1.0 / 3.0;
	assert_round_trip(p);
	policy_pins_free(p);
	p = pins_ok(HEAD "data: {label: \"\xf0\x9f\x92\xb3 \\x01\\u0085\", positive: \"\\n\"}\n"
			 "train: {optimizer: sgd, momentum: 0.5, lr: 1e-300}\n"
			 "determinism: {mode: fast, threads: 256}\n"
			 "eval: {subset: validation, reduction: sum, input_scale: 2.5e+10}\n");
	ck_assert_str_eq(p->data.label, "\xf0\x9f\x92\xb3 \x01\xc2\x85");
	assert_round_trip(p);
	policy_pins_free(p);
}
END_TEST

/* Each column name keeps where the file gave it, whatever the sort order. */
START_TEST(test_pins_column_positions)
{
	static const char text[] = HEAD "data:\n  label: c\n  id: \"k\"\n"
				   "  exclude: [zz, aa]\n"
				   "  categorical:\n    - m\n    - b\n";
	struct rba_detail d;
	struct pins *p, *c;

	ck_assert_int_eq(policy_pins_parse(text, strlen(text), "f.yaml", &p, &d), 0);
	ck_assert_str_eq(p->src.file, "f.yaml");
	ck_assert_uint_eq(p->src.label.line, 5);
	ck_assert_uint_eq(p->src.label.col, 10);
	ck_assert_uint_eq(p->src.id.line, 6);
	ck_assert_uint_eq(p->src.id.col, 7);
	ck_assert_str_eq(p->data.exclude[0], "aa");
	ck_assert_uint_eq(p->src.exclude[0].line, 7);
	ck_assert_uint_eq(p->src.exclude[0].col, 17);
	ck_assert_uint_eq(p->src.exclude[1].col, 13);
	ck_assert_str_eq(p->data.categorical[0], "b");
	ck_assert_uint_eq(p->src.categorical[0].line, 10);
	ck_assert_uint_eq(p->src.categorical[1].line, 9);
	ck_assert_uint_eq(p->src.categorical[1].col, 7);
	c = policy_pins_dup(p);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_ne(c->src.file, p->src.file);
	ck_assert_str_eq(c->src.file, "f.yaml");
	ck_assert_uint_eq(c->src.exclude[1].col, 13);
	policy_pins_free(p);
	policy_pins_free(c);
}
END_TEST

START_TEST(test_pins_dup)
{
	struct pins *p = pins_ok(full_pins), *c;
	char *t1 = pins_text(p), *t2;

	c = policy_pins_dup(p);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_ne(c->data.exclude, p->data.exclude);
	ck_assert_ptr_ne(c->data.label, p->data.label);
	policy_pins_free(p);
	t2 = pins_text(c);
	ck_assert_str_eq(t1, t2);
	policy_pins_free(c);
	free(t1);
	free(t2);

	p = pins_ok(minimal_pins);
	c = policy_pins_dup(p);
	ck_assert_ptr_null(c->data.exclude);
	ck_assert_ptr_null(c->data.positive);
	policy_pins_free(p);
	policy_pins_free(c);
}
END_TEST

/* ---- config hash ----------------------------------------------------- */

START_TEST(test_hash_is_of_canonical_blocks)
{
	struct pins *p = pins_ok(full_pins);
	char *text = pins_text(p);
	const char *data = strstr(text, "\ndata:\n") + 1;
	const char *eval = strstr(text, "\neval:\n") + 1;
	const char *det = strstr(text, "\ndeterminism:\n") + 1;
	struct rba_hasher h;
	struct rba_digest want, got;

	rba_hasher_init(&h);
	rba_hasher_update(&h, data, (size_t)(eval - data));
	rba_hasher_update(&h, det, strlen(det));
	rba_hasher_final(&h, &want);
	policy_pins_config_hash(p, &got);
	ck_assert(rba_digest_equal(&want, &got));
	free(text);
	policy_pins_free(p);
}
END_TEST

START_TEST(test_hash_reformatting)
{
	static const char *const same[] = {
		/* comments, quoting, key order, flow style, number spellings */
		"# a comment\n" HEAD
		"data: {label: 'class', positive: 2, id: \"id\", exclude: [\"telephone\"],\n"
		"       categorical: [housing, purpose],   # any order\n"
		"       split: {seed: +0, order: random, validation: 25e-2}}\n"
		"determinism: {threads: 1, mode: \"strict\"}\n"
		"model: {dropout: .3, hidden: [32, 32]}\n"
		"train: {betas: [0.90, 9.99e-1], eps: 0.00000001, lr: 2E-2,\n"
		"        weight_decay: 3e-3, epochs: 20, optimizer: adamw}\n",
		/* CRLF, a BOM, document markers, defaults left out */
		"\xef\xbb\xbf---\r\n" HEAD
		"data:\r\n  label: class\r\n  positive: '2'\r\n  id: id\r\n"
		"  exclude:\r\n  - telephone\r\n  categorical:\r\n  - purpose\r\n  - housing\r\n"
		"model:\r\n  hidden:\r\n  - 32\r\n  - 32\r\n  dropout: 0.30\r\n"
		"train:\r\n  lr: 0.020\r\n  weight_decay: 0.003\r\n...\r\n",
		/* what the hash leaves out: version, snapshot, register's fields, eval */
		"schema: rebuild-audit/pins/v1\nversion: other-name\n"
		"snapshot: sha256:0000000000000000000000000000000000000000000000000000000000000000\n"
		"code_revision: x\ntrainer_abi: 7\n"
		"environment: " SNAP "\nartifact: " SNAP "\n"
		"data: {label: class, positive: \"2\", id: id, exclude: [telephone],\n"
		"       categorical: [purpose, housing]}\n"
		"model: {hidden: [32, 32], dropout: 0.3}\n"
		"train: {lr: 0.02, weight_decay: 0.003}\n"
		"eval: {subset: validation, reduction: sum, input_scale: 2}\n",
	};
	struct rba_digest base, h;
	struct rba_detail d;
	struct pins *a, *b;
	size_t i;

	pins_hash(full_pins, &base);
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		pins_hash(same[i], &h);
		ck_assert_msg(rba_digest_equal(&base, &h), "variant %zu changed the hash", i);
	}
	/* listing order of column sets */
	pins_hash(HEAD "data: {label: y, exclude: [b, a, c], categorical: [e, d]}\n", &base);
	pins_hash(HEAD "data: {label: y, exclude: [c, a, b], categorical: [d, e]}\n", &h);
	ck_assert(rba_digest_equal(&base, &h));

	ck_assert_int_eq(policy_pins_load(FIXTURES "/pins/example-block.yaml", &a, &d), 0);
	ck_assert_int_eq(policy_pins_load(FIXTURES "/pins/example-flow.yaml", &b, &d), 0);
	policy_pins_config_hash(a, &base);
	policy_pins_config_hash(b, &h);
	ck_assert(rba_digest_equal(&base, &h));
	ck_assert_str_ne(a->version, b->version);
	policy_pins_free(a);
	policy_pins_free(b);
}
END_TEST

START_TEST(test_hash_semantic_changes)
{
	static const char *const edits[][2] = {
		{"label: class", "label: risk"},
		{"positive: \"2\"", "positive: \"1\""},
		{"positive: \"2\"", "positive: null"},
		{"id: id", "id: null"},
		{"exclude: [telephone]", "exclude: [telephone, job]"},
		{"exclude: [telephone]", "exclude: []"},
		{"categorical: [purpose, housing]", "categorical: [purpose]"},
		{"standardize: true", "standardize: false"},
		{"validation: 0.25", "validation: 0.2"},
		{"order: random", "order: tail"},
		{"    seed: 0", "    seed: 1"},
		{"hidden: [32, 32]", "hidden: [32]"},
		{"hidden: [32, 32]", "hidden: [32, 16]"},
		{"hidden: [32, 32]", "hidden: []"},
		{"dropout: 0.3", "dropout: 0.2"},
		{"  seed: 0\n  epochs", "  seed: 1\n  epochs"},
		{"epochs: 20", "epochs: 21"},
		{"batch_size: 128", "batch_size: 64"},
		{"lr: 0.02", "lr: 0.020000000000000004"},
		{"weight_decay: 0.003", "weight_decay: 0"},
		{"betas: [0.9, 0.999]", "betas: [0.8, 0.999]"},
		{"betas: [0.9, 0.999]", "betas: [0.9, 0.99]"},
		{"eps: 1.0e-8", "eps: 1.0e-7"},
		{"optimizer: adamw\n  lr: 0.02\n  weight_decay: 0.003\n  betas: [0.9, 0.999]\n"
		 "  eps: 1.0e-8\n",
		 "optimizer: sgd\n  lr: 0.02\n  weight_decay: 0.003\n"},
		{"mode: strict", "mode: fast"},
		{"threads: 1", "threads: 2"},
	};
	struct rba_digest base, h, sgd0, sgd1;
	char *t;
	size_t i;

	pins_hash(full_pins, &base);
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		t = edit(full_pins, edits[i][0], edits[i][1]);
		pins_hash(t, &h);
		ck_assert_msg(!rba_digest_equal(&base, &h), "edit %zu ('%s') kept the hash",
			      i, edits[i][1]);
		free(t);
	}
	pins_hash(HEAD "data: {label: c}\ntrain: {optimizer: sgd, momentum: 0.9}\n", &sgd0);
	pins_hash(HEAD "data: {label: c}\ntrain: {optimizer: sgd, momentum: 0.8}\n", &sgd1);
	ck_assert(!rba_digest_equal(&sgd0, &sgd1));
	pins_hash(HEAD "data: {label: c}\ntrain: {optimizer: sgd}\n", &sgd1);
	pins_hash(HEAD "data: {label: c}\ntrain: {optimizer: sgd, momentum: 0}\n", &h);
	ck_assert(rba_digest_equal(&sgd1, &h));
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

struct err_case {
	const char *text;
	int code;
	unsigned long line, col;
	const char *key;
	const char *reason;
};

static const struct err_case pins_errors[] = {
	/* exec trainers */
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: abc1234, "
		   "command: [x], artifact: m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 48, "trainer.revision",
	 "'trainer.revision' must be a full commit id of 40 lowercase hex digits, "
	 "not 'abc1234' (a branch name or a short hash can move: pin what 'git "
	 "rev-parse abc1234' prints)"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: main, "
		   "command: [x], artifact: m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 48, "trainer.revision",
	 "'trainer.revision' must be a full commit id of 40 lowercase hex digits, "
	 "not 'main' (a branch name or a short hash can move: pin what 'git "
	 "rev-parse main' prints)"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "artifact: m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 1, "trainer.command", "missing required key 'trainer.command'"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [], artifact: m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 99, "trainer.command", "'trainer.command' must name a program"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: ../m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 114, "trainer.artifact",
	 "'trainer.artifact' must be a file name (no '/', not starting with '.', "
	 "at most 128 bytes)"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: m, format: onnx}\n",
	 RBA_E_SCHEMA, 5, 125, "trainer.format",
	 "'trainer.format' must be xgboost-json or opaque"},
	{EXEC_HEAD "trainer: {kind: builtin, repository: r}\n", RBA_E_SCHEMA, 5, 26,
	 "trainer.repository", "'trainer.repository' applies only to trainer kind exec"},
	{EXEC_HEAD "model: {kind: gbdt}\ntrainer: {kind: exec, repository: r, revision: "
		   COMMIT ", command: [x], artifact: m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 1, "model",
	 "'model' applies only to trainer kind builtin (an exec trainer takes "
	 "trainer.params)"},
	{EXEC_HEAD "train: {lr: 0.1}\ntrainer: {kind: exec, repository: r, revision: "
		   COMMIT ", command: [x], artifact: m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 9, "train.lr",
	 "'train.lr' applies only to trainer kind builtin (an exec trainer takes "
	 "trainer.params)"},
	{EXEC_HEAD "code_revision: abc\ntrainer: {kind: exec, repository: r, revision: "
		   COMMIT ", command: [x], artifact: m, format: opaque}\n",
	 RBA_E_SCHEMA, 5, 16, "code_revision",
	 "'code_revision' must be the commit 'trainer.revision' pins (" COMMIT ")"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: m, format: opaque, params: {a: [1]}}\n",
	 RBA_E_SCHEMA, 5, 145, "trainer.params.a",
	 "'trainer.params.a' must be a number, a boolean or a string"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: m, format: opaque, environment: {variables: {HOME: x}}}\n",
	 RBA_E_SCHEMA, 5, 159, "trainer.environment.variables",
	 "'trainer.environment.variables' sets 'HOME', which the sandbox sets itself"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: m, format: opaque, environment: "
		   "{pass: [Foo], variables: {FOO: x}}}\n",
	 RBA_E_SCHEMA, 5, 146, "trainer.environment",
	 "'trainer.environment' names variable 'FOO' twice ('Foo', ignoring case, "
	 "in variables or pass)"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: m, format: opaque, environment: {packages: [Bad_Name]}}\n",
	 RBA_E_SCHEMA, 5, 158, "trainer.environment.packages[0]",
	 "'trainer.environment.packages[0]' is not a Debian package name"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: m, format: opaque, limits: {seconds: 0}}\n",
	 RBA_E_RANGE, 5, 151, "trainer.limits.seconds",
	 "'trainer.limits.seconds' must be an integer from 1 to 604800"},
	{EXEC_HEAD "trainer: {kind: exec, repository: r, revision: " COMMIT ", "
		   "command: [x], artifact: m, format: opaque, score: {}}\n",
	 RBA_E_SCHEMA, 5, 140, "trainer.score.command", "missing required key 'trainer.score.command'"},
	/* unknown, duplicate, missing keys */
	{HEAD "data: {label: c}\ntrain:\n  lrr: 1\n", RBA_E_SCHEMA, 6, 3, "train.lrr",
	 "unknown key 'train.lrr'"},
	{HEAD "data: {label: c}\nextra: 1\n", RBA_E_SCHEMA, 5, 1, "extra",
	 "unknown key 'extra'"},
	{HEAD "data: {label: c, \"\\x1b[2J\": 1}\n", RBA_E_SCHEMA, 4, 18, "data.?[2J",
	 "unknown key 'data.?[2J'"},
	{HEAD "data: {label: c}\nmodel: {}\nmodel: {}\n", RBA_E_SCHEMA, 6, 1, "model",
	 "duplicate key 'model'"},
	{HEAD "data: {label: c, label: d}\n", RBA_E_SCHEMA, 4, 18, "data.label",
	 "duplicate key 'data.label'"},
	{HEAD "data: {label: c}\n'model': {}\n\"model\": {}\n", RBA_E_SCHEMA, 6, 1, "model",
	 "duplicate key 'model'"},
	{HEAD "data:\n  id: x\n", RBA_E_SCHEMA, 4, 1, "data.label",
	 "missing required key 'data.label'"},
	{HEAD "data:\n", RBA_E_SCHEMA, 4, 1, "data.label",
	 "missing required key 'data.label'"},
	{HEAD, RBA_E_SCHEMA, 1, 1, "data", "missing required key 'data'"},
	{"version: v\nsnapshot: " SNAP "\ndata: {label: c}\n", RBA_E_SCHEMA, 1, 1,
	 "schema", "missing required key 'schema'"},
	/* no document at all: the file name, no position, no key */
	{"", RBA_E_SCHEMA, 0, 0, "", "empty file"},
	{"# only a comment\n", RBA_E_SCHEMA, 0, 0, "", "empty file"},
	{"\n  \n", RBA_E_SCHEMA, 0, 0, "", "empty file"},
	/* types and ranges */
	{HEAD "data: {label: c}\ntrain: {lr: 0}\n", RBA_E_RANGE, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: -1e-3}\n", RBA_E_RANGE, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: fast}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: [1]}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: .inf}\n", RBA_E_RANGE, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: NaN}\n", RBA_E_RANGE, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: 1e400}\n", RBA_E_RANGE, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: 0x1p-4}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: 1_000}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: 01}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: '0,5'}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: ' 1'}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {lr: 1e}\n", RBA_E_SCHEMA, 5, 13, "train.lr",
	 "'train.lr' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {weight_decay: -1}\n", RBA_E_RANGE, 5, 23,
	 "train.weight_decay",
	 "'train.weight_decay' must be a number greater than or equal to 0"},
	{HEAD "data: {label: c}\ntrain: {betas: [0.9, 1]}\n", RBA_E_RANGE, 5, 22,
	 "train.betas[1]", "'train.betas[1]' must be a number in [0, 1)"},
	{HEAD "data: {label: c}\ntrain: {betas: [0.9, 0.9, 0.9]}\n", RBA_E_SCHEMA, 5, 16,
	 "train.betas", "'train.betas' must be a list of 2 numbers"},
	{HEAD "data: {label: c}\ntrain: {eps: 0}\n", RBA_E_RANGE, 5, 14, "train.eps",
	 "'train.eps' must be a number greater than 0"},
	{HEAD "data: {label: c}\ntrain: {optimizer: sgd, momentum: 1}\n", RBA_E_RANGE, 5,
	 35, "train.momentum", "'train.momentum' must be a number in [0, 1)"},
	{HEAD "data: {label: c}\ntrain: {betas: [0.9, 0.99], optimizer: sgd}\n",
	 RBA_E_SCHEMA, 5, 9, "train.betas", "'train.betas' applies only to optimizer adamw"},
	{HEAD "data: {label: c}\ntrain: {optimizer: sgd, eps: 1e-8}\n", RBA_E_SCHEMA, 5,
	 25, "train.eps", "'train.eps' applies only to optimizer adamw"},
	{HEAD "data: {label: c}\ntrain: {momentum: 0.9}\n", RBA_E_SCHEMA, 5, 9,
	 "train.momentum", "'train.momentum' applies only to optimizer sgd"},
	{HEAD "data: {label: c}\ntrain: {optimizer: Adam}\n", RBA_E_SCHEMA, 5, 20,
	 "train.optimizer", "'train.optimizer' must be adamw or sgd"},
	{HEAD "data: {label: c}\ntrain: {epochs: 0}\n", RBA_E_RANGE, 5, 17, "train.epochs",
	 "'train.epochs' must be an integer from 1 to 100000"},
	{HEAD "data: {label: c}\ntrain: {epochs: 100001}\n", RBA_E_RANGE, 5, 17,
	 "train.epochs", "'train.epochs' must be an integer from 1 to 100000"},
	{HEAD "data: {label: c}\ntrain: {epochs: 1e3}\n", RBA_E_SCHEMA, 5, 17,
	 "train.epochs", "'train.epochs' must be an integer from 1 to 100000"},
	{HEAD "data: {label: c}\ntrain: {batch_size: 1048577}\n", RBA_E_RANGE, 5, 21,
	 "train.batch_size", "'train.batch_size' must be an integer from 1 to 1048576"},
	{HEAD "data: {label: c}\ntrain: {seed: 18446744073709551616}\n", RBA_E_RANGE, 5, 15,
	 "train.seed", "'train.seed' must be an integer from 0 to 18446744073709551615"},
	{HEAD "data: {label: c}\ntrain: {seed: -3}\n", RBA_E_RANGE, 5, 15, "train.seed",
	 "'train.seed' must be an integer from 0 to 18446744073709551615"},
	{HEAD "data: {label: c}\ntrain: []\n", RBA_E_SCHEMA, 5, 8, "train",
	 "'train' must be a mapping"},
	{HEAD "data: {label: c}\nmodel: {kind: cnn}\n", RBA_E_SCHEMA, 5, 15, "model.kind",
	 "'model.kind' must be mlp or gbdt"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt, hidden: [4]}\n", RBA_E_SCHEMA, 5, 21,
	 "model.hidden", "'model.hidden' applies only to model kind mlp"},
	{HEAD "data: {label: c}\nmodel: {trees: 10}\n", RBA_E_SCHEMA, 5, 9,
	 "model.trees", "'model.trees' applies only to model kind gbdt"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt}\ntrain: {seed: 1, epochs: 3}\n",
	 RBA_E_SCHEMA, 6, 18, "train.epochs",
	 "'train.epochs' applies only to model kind mlp"},
	{HEAD "data: {label: c}\ntrain: {lr: 0.1}\nmodel: {kind: gbdt}\n",
	 RBA_E_SCHEMA, 5, 9, "train.lr", "'train.lr' applies only to model kind mlp"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt, max_leaves: 1}\n", RBA_E_RANGE, 5, 33,
	 "model.max_leaves", "'model.max_leaves' must be 0 (no cap) or an integer from 2 to 65536"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt, max_depth: 17}\n", RBA_E_RANGE, 5, 32,
	 "model.max_depth", "'model.max_depth' must be an integer from 1 to 16"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt, max_bins: 257}\n", RBA_E_RANGE, 5, 31,
	 "model.max_bins", "'model.max_bins' must be an integer from 2 to 256"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt, learning_rate: 0}\n", RBA_E_RANGE, 5, 36,
	 "model.learning_rate", "'model.learning_rate' must be a number in (0, 1]"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt, subsample: 1.5}\n", RBA_E_RANGE, 5, 32,
	 "model.subsample", "'model.subsample' must be a number in (0, 1]"},
	{HEAD "data: {label: c}\nmodel: {kind: gbdt, lambda: -1}\n", RBA_E_RANGE, 5, 29,
	 "model.lambda", "'model.lambda' must be a number greater than or equal to 0"},
	{HEAD "data: {label: c}\nmodel: {activation: tanh}\n", RBA_E_SCHEMA, 5, 21,
	 "model.activation", "'model.activation' must be relu"},
	{HEAD "data: {label: c}\nmodel: {hidden: 32}\n", RBA_E_SCHEMA, 5, 17,
	 "model.hidden", "'model.hidden' must be a list"},
	{HEAD "data: {label: c}\nmodel: {hidden: [4097]}\n", RBA_E_RANGE, 5, 18,
	 "model.hidden[0]", "'model.hidden[0]' must be an integer from 1 to 4096"},
	{HEAD "data: {label: c}\nmodel: {hidden: [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8]}\n",
	 RBA_E_LIMIT, 5, 17, "model.hidden", "'model.hidden' has more than 16 layers"},
	{HEAD "data: {label: c}\nmodel: {dropout: -0.1}\n", RBA_E_RANGE, 5, 18,
	 "model.dropout", "'model.dropout' must be a number in [0, 1)"},
	{HEAD "data: {label: c}\neval: {dropout: false}\n", RBA_E_SCHEMA, 5, 17,
	 "eval.dropout", "'eval.dropout' must be off or on"},
	{HEAD "data: {label: c}\neval: {subset: test}\n", RBA_E_SCHEMA, 5, 16,
	 "eval.subset", "'eval.subset' must be all or validation"},
	{HEAD "data: {label: c}\neval: {reduction: max}\n", RBA_E_SCHEMA, 5, 19,
	 "eval.reduction", "'eval.reduction' must be mean or sum"},
	{HEAD "data: {label: c}\neval: {input_scale: 0}\n", RBA_E_RANGE, 5, 21,
	 "eval.input_scale", "'eval.input_scale' must be a number greater than 0"},
	{HEAD "data: {label: c}\ndeterminism: {mode: exact}\n", RBA_E_SCHEMA, 5, 21,
	 "determinism.mode", "'determinism.mode' must be strict or fast"},
	{HEAD "data: {label: c}\ndeterminism: {threads: 257}\n", RBA_E_RANGE, 5, 24,
	 "determinism.threads", "'determinism.threads' must be an integer from 1 to 256"},
	{HEAD "data: {label: c, standardize: True}\n", RBA_E_SCHEMA, 4, 31,
	 "data.standardize", "'data.standardize' must be true or false"},
	{HEAD "data: {label: c, standardize: 1}\n", RBA_E_SCHEMA, 4, 31,
	 "data.standardize", "'data.standardize' must be true or false"},
	{HEAD "data: {label: c, split: {validation: 1}}\n", RBA_E_RANGE, 4, 38,
	 "data.split.validation", "'data.split.validation' must be a number in (0, 1)"},
	{HEAD "data: {label: c, split: {order: head}}\n", RBA_E_SCHEMA, 4, 33,
	 "data.split.order", "'data.split.order' must be random or tail"},
	{HEAD "data: {label: c, split: {seed: x}}\n", RBA_E_SCHEMA, 4, 32,
	 "data.split.seed", "'data.split.seed' must be an integer from 0 to 18446744073709551615"},
	{HEAD "data: {label: [a]}\n", RBA_E_SCHEMA, 4, 15, "data.label",
	 "'data.label' must be a non-empty string"},
	{HEAD "data: {label: }\n", RBA_E_SCHEMA, 4, 15, "data.label",
	 "'data.label' must be a non-empty string"},
	{HEAD "data: {label: \"a\\0b\"}\n", RBA_E_SCHEMA, 4, 15, "data.label",
	 "'data.label' must not contain a NUL character"},
	{HEAD "data: {label: c, id: c}\n", RBA_E_SCHEMA, 4, 22, "data.id",
	 "'data.id' must differ from 'data.label'"},
	{HEAD "data: {label: c, id: i, exclude: [a, i]}\n", RBA_E_SCHEMA, 4, 38,
	 "data.exclude[1]", "'data.exclude[1]' names the id column, which is never a feature"},
	{HEAD "data: {label: c, exclude: [a, b, a]}\n", RBA_E_SCHEMA, 4, 34,
	 "data.exclude[2]", "'data.exclude[2]' repeats 'a'"},
	{HEAD "data: {label: c, categorical: [c]}\n", RBA_E_SCHEMA, 4, 32,
	 "data.categorical[0]", "'data.categorical[0]' names the label column"},
	{HEAD "data: {label: c, id: i, categorical: [i]}\n", RBA_E_SCHEMA, 4, 39,
	 "data.categorical[0]", "'data.categorical[0]' names the id column"},
	{HEAD "data: {label: c, exclude: [x], categorical: [y, x]}\n", RBA_E_SCHEMA, 4, 49,
	 "data.categorical[1]", "'data.categorical[1]' names a column in 'data.exclude'"},
	{HEAD "data: {label: c, exclude: x}\n", RBA_E_SCHEMA, 4, 27, "data.exclude",
	 "'data.exclude' must be a list"},
	{HEAD "data: {label: c}\ntrainer_abi: 0\n", RBA_E_RANGE, 5, 14, "trainer_abi",
	 "'trainer_abi' must be an integer from 1 to 4294967295"},
	{HEAD "data: {label: c}\nartifact: sha256:abc\n", RBA_E_SCHEMA, 5, 11, "artifact",
	 "'artifact' must be a digest sha256:<64 lowercase hex digits>"},
	{HEAD "data: {label: c}\ncode_revision: ''\n", RBA_E_SCHEMA, 5, 16, "code_revision",
	 "'code_revision' must be a non-empty string"},
	{"schema: rebuild-audit/pins/v1\nversion: a/b\nsnapshot: " SNAP "\ndata: {label: c}\n",
	 RBA_E_SCHEMA, 2, 10, "version",
	 "'version' must be a name of 1-128 characters [A-Za-z0-9._-] not starting with '.' or '-'"},
	{"schema: rebuild-audit/pins/v1\nversion: -v\nsnapshot: " SNAP "\ndata: {label: c}\n",
	 RBA_E_SCHEMA, 2, 10, "version",
	 "'version' must be a name of 1-128 characters [A-Za-z0-9._-] not starting with '.' or '-'"},
	{"schema: rebuild-audit/pins/v1\nversion: null\nsnapshot: " SNAP "\ndata: {label: c}\n",
	 RBA_E_SCHEMA, 2, 10, "version",
	 "'version' must be a name of 1-128 characters [A-Za-z0-9._-] not starting with '.' or '-'"},
	{"schema: rebuild-audit/policy/v1\nversion: v\n", RBA_E_SCHEMA, 1, 9, "schema",
	 "'schema' must be rebuild-audit/pins/v1"},
	{"schema: rebuild-audit/pins/v10\n", RBA_E_NEWER, 1, 9, "schema",
	 "'schema' rebuild-audit/pins/v10 is newer than this tool reads (rebuild-audit/pins/v1)"},
	{"schema: rebuild-audit/pins/v0\n", RBA_E_SCHEMA, 1, 9, "schema",
	 "'schema' must be rebuild-audit/pins/v1"},
	{"[1, 2]\n", RBA_E_SCHEMA, 1, 1, "", "the document must be a mapping"},
	{"just text\n", RBA_E_SCHEMA, 1, 1, "", "the document must be a mapping"},
	/* structure: YAML syntax, aliases, tags, documents, depth */
	{HEAD "data: {label: c}\nmodel: {hidden: [1, 2}\n", RBA_E_SYNTAX, 5, 22, "",
	 "did not find expected ',' or ']'"},
	{HEAD "data:\n  label: c\n x: 1\n", RBA_E_SYNTAX, 6, 2, "",
	 "did not find expected key"},
	{HEAD "data: {label: c}\nmodel: hidden: 1\n", RBA_E_SYNTAX, 5, 14, "",
	 "mapping values are not allowed in this context"},
	{HEAD "data:\n\tlabel: c\n", RBA_E_SYNTAX, 5, 1, "",
	 "found character that cannot start any token"},
	{HEAD "data: {label: \"c}\n", RBA_E_SYNTAX, 5, 1, "",
	 "found unexpected end of stream"},
	{HEAD "data: {label: &x c, id: *x}\n", RBA_E_SYNTAX, 4, 15, "",
	 "anchors and aliases are not allowed"},
	{HEAD "data: &d {label: c}\n", RBA_E_SYNTAX, 4, 7, "",
	 "anchors and aliases are not allowed"},
	{HEAD "data: {label: !!str c}\n", RBA_E_SYNTAX, 4, 15, "", "tags are not allowed"},
	{HEAD "data: {label: c}\n---\n" HEAD, RBA_E_SYNTAX, 5, 1, "",
	 "more than one YAML document"},
	{HEAD "data: {label: c}\n...\n---\nx: 1\n", RBA_E_SYNTAX, 6, 1, "",
	 "more than one YAML document"},
	{HEAD "data: {label: c}\nmodel: {hidden: [[[[[[[1]]]]]]]}\n", RBA_E_LIMIT, 5, 23,
	 "", "nesting deeper than 8 levels"},
	{HEAD "data: {label: c}\n? {a: 1}\n: x\n", RBA_E_SYNTAX, 5, 3, "",
	 "mapping keys must be scalars"},
	/* characters */
	{HEAD "data: {label: \"\xc3\xa9\xff\"}\n", RBA_E_ENCODING, 4, 17, "", "invalid UTF-8"},
	{HEAD "data: {label: c\xed\xa0\x80}\n", RBA_E_ENCODING, 4, 16, "", "invalid UTF-8"},
	{HEAD "data: {label: c\xf4\x90\x80\x80}\n", RBA_E_ENCODING, 4, 16, "", "invalid UTF-8"},
	{HEAD "data: {label: c\xe2\x82}\n", RBA_E_ENCODING, 4, 16, "", "invalid UTF-8"},
	{"\xff\xfe" "s\0c\0", RBA_E_ENCODING, 1, 1, "", "invalid UTF-8"},
	{"\xef\xbb\xbf" HEAD "\xc3\xa9\r\n\xc3\xa9\xc3\xa9\x80", RBA_E_ENCODING, 5, 3, "",
	 "invalid UTF-8"},
	{HEAD "data: {label: c\x7f}\n", RBA_E_SYNTAX, 4, 16, "",
	 "control characters are not allowed"},
	{HEAD "data: {label: c\xc2\x9b}\n", RBA_E_SYNTAX, 4, 16, "",
	 "control characters are not allowed"},
	/* missing-value tokens and the imputation */
	{HEAD "data:\n  label: c\n  missing: [NA, \"\", NA]\n", RBA_E_SCHEMA, 6, 21,
	 "data.missing[2]", "'data.missing[2]' declares the missing token \"NA\" twice"},
	{HEAD "data:\n  label: c\n  missing: NA\n", RBA_E_SCHEMA, 6, 12,
	 "data.missing", "'data.missing' must be a list"},
	{HEAD "data:\n  label: c\n  missing: [~]\n", RBA_E_SCHEMA, 6, 13,
	 "data.missing[0]",
	 "'data.missing[0]' must be a string (the empty field is written \"\")"},
	{HEAD "data:\n  label: c\n  impute: median\n", RBA_E_SCHEMA, 6, 11,
	 "data.impute", "'data.impute' must be mean or a number"},
	{HEAD "data:\n  label: c\n  impute: mean\nmodel: {kind: gbdt}\n", RBA_E_SCHEMA,
	 6, 3, "data.impute",
	 "'data.impute' applies only to model kind mlp (trees learn where a missing "
	 "value goes)"},
	{HEAD "data:\n  label: c\n  missing: []\n  impute: 0\n", RBA_E_SCHEMA,
	 7, 3, "data.impute", "'data.impute' has nothing to fill: 'data.missing' is []"},
};


/*
 * An exec trainer: every key read, canonical text that parses back to
 * itself, the params file, and a config hash that covers the trainer
 * while a builtin record's text and hash stay what they were.
 */
START_TEST(test_pins_exec)
{
	struct pins *p = pins_ok(exec_pins), *q, *c, *b0, *b1;
	struct rba_digest h0, h1, hb0, hb1;
	struct rba_buf j;
	char *text, *text2, *t0, *t1;

	ck_assert(policy_pins_is_exec(p));
	ck_assert_str_eq(p->trainer.revision, COMMIT);
	ck_assert_uint_eq(p->trainer.ncommand, 5);
	ck_assert_uint_eq(p->trainer.nparams, 5);
	ck_assert_str_eq(p->trainer.params[0].key, "eta"); /* sorted */
	ck_assert_str_eq(p->trainer.packages[0], "python3-numpy");
	ck_assert_str_eq(p->trainer.var_names[0], "A_B");
	ck_assert_str_eq(p->trainer.var_values[1], "1");
	ck_assert_uint_eq(p->trainer.seconds, 60);
	ck_assert_uint_eq(p->trainer.nscore, 5);
	ck_assert_uint_eq(p->src.revision.line, 10);
	rba_buf_init(&j);
	policy_pins_params_json(p, &j);
	ck_assert_str_eq(rba_buf_cstr(&j), "{\"eta\":0.3,\"hist\":true,\"max_depth\":4,"
					    "\"n\":\"7\",\"objective\":\"binary:logistic\"}\n");
	rba_buf_release(&j);
	text = pins_text(p);
	ck_assert_ptr_nonnull(strstr(text, "  revision: " COMMIT "\n"));
	ck_assert_ptr_null(strstr(text, "model:"));
	q = pins_ok(text);
	text2 = pins_text(q);
	ck_assert_str_eq(text, text2);
	c = policy_pins_dup(p);
	ck_assert_ptr_nonnull(c);
	free(text2);
	text2 = pins_text(c);
	ck_assert_str_eq(text, text2);
	/* the config hash covers the trainer: another eta, another hash */
	policy_pins_config_hash(p, &h0);
	c->trainer.params[0].num = 0.1;
	policy_pins_config_hash(c, &h1);
	ck_assert(!rba_digest_equal(&h0, &h1));
	/* a builtin record: trainer: {kind: builtin} changes nothing */
	b0 = pins_ok(HEAD "data: {label: c}\n");
	b1 = pins_ok(HEAD "data: {label: c}\ntrainer: {kind: builtin}\n");
	t0 = pins_text(b0);
	t1 = pins_text(b1);
	ck_assert_str_eq(t0, t1);
	ck_assert_ptr_null(strstr(t0, "trainer:"));
	policy_pins_config_hash(b0, &hb0);
	policy_pins_config_hash(b1, &hb1);
	ck_assert(rba_digest_equal(&hb0, &hb1));
	ck_assert(!policy_pins_is_exec(b1));
	free(t0);
	free(t1);
	free(text);
	free(text2);
	policy_pins_free(b0);
	policy_pins_free(b1);
	policy_pins_free(c);
	policy_pins_free(q);
	policy_pins_free(p);
}
END_TEST

START_TEST(test_pins_errors)
{
	const struct err_case *c = &pins_errors[_i];
	struct rba_detail d;
	struct pins *p = (struct pins *)1;
	size_t n = strlen(c->text);
	int err;

	/* the UTF-16 case holds NULs */
	if (c->text[0] == '\xff')
		n = 6;
	err = policy_pins_parse(c->text, n, "t.yaml", &p, &d);
	ck_assert_msg(err == c->code, "case %d: code %d, want %d (%s)", _i, err, c->code,
		      d.reason);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(d.file, "t.yaml");
	ck_assert_str_eq(d.reason, c->reason);
	ck_assert_msg(d.line == c->line && d.col == c->col,
		      "case %d (%s): at %lu:%lu, want %lu:%lu", _i, c->reason, d.line,
		      d.col, c->line, c->col);
	ck_assert_str_eq(d.key, c->key);
}
END_TEST

static const struct err_case policy_errors[] = {
	{PHEAD "decision: {rule: argmax}\ntolerance: {max_flip: 0}\n", RBA_E_SCHEMA, 3, 13,
	 "tolerance.max_flip", "unknown key 'tolerance.max_flip'"},
	{PHEAD "decision: {rule: argmax}\ndecision: {rule: argmax}\n", RBA_E_SCHEMA, 3, 1,
	 "decision", "duplicate key 'decision'"},
	{PHEAD "tolerance: {max_flips: 0}\n", RBA_E_SCHEMA, 1, 1, "decision",
	 "missing required key 'decision'"},
	{PHEAD "decision:\n", RBA_E_SCHEMA, 2, 1, "decision.bands",
	 "missing required key 'decision.bands'"},
	{PHEAD "decision: {}\n", RBA_E_SCHEMA, 2, 1, "decision.bands",
	 "missing required key 'decision.bands'"},
	{PHEAD "decision: [approve]\n", RBA_E_SCHEMA, 2, 11, "decision",
	 "'decision' must be a mapping"},
	{PHEAD "decision: {rule: argmax, bands: [{decision: a}]}\n", RBA_E_SCHEMA, 2, 26,
	 "decision", "'decision' must have either 'bands' or 'rule', not both"},
	{PHEAD "decision: {rule: softmax}\n", RBA_E_SCHEMA, 2, 18, "decision.rule",
	 "'decision.rule' must be argmax"},
	{PHEAD "decision: {bands: []}\n", RBA_E_SCHEMA, 2, 19, "decision.bands",
	 "'decision.bands' must have at least one band"},
	{PHEAD "decision: {bands: {decision: a}}\n", RBA_E_SCHEMA, 2, 19, "decision.bands",
	 "'decision.bands' must be a list"},
	{PHEAD "decision: {bands: [approve]}\n", RBA_E_SCHEMA, 2, 20, "decision.bands[0]",
	 "'decision.bands[0]' must be a mapping"},
	{PHEAD "decision:\n  bands:\n    - {below: 0.3, decision: a}\n    - {below: 0.3, decision: b}\n"
	       "    - {decision: c}\n",
	 RBA_E_RANGE, 5, 15, "decision.bands[1].below",
	 "'decision.bands[1].below' must be greater than 'decision.bands[0].below'"},
	{PHEAD "decision:\n  bands:\n    - {below: 0.3, decision: a}\n    - {below: 0.5, decision: b}\n",
	 RBA_E_SCHEMA, 5, 8, "decision.bands[1].below",
	 "'decision.bands[1].below' is not allowed: the last band takes every higher score"},
	{PHEAD "decision:\n  bands:\n    - {decision: a}\n    - {decision: b}\n", RBA_E_SCHEMA, 4,
	 7, "decision.bands[0].below", "missing required key 'decision.bands[0].below'"},
	{PHEAD "decision:\n  bands:\n    - {below: 0.3}\n    - {decision: b}\n", RBA_E_SCHEMA, 4, 7,
	 "decision.bands[0].decision", "missing required key 'decision.bands[0].decision'"},
	{PHEAD "decision:\n  bands:\n    - {below: 0, decision: a}\n    - {decision: b}\n",
	 RBA_E_RANGE, 4, 15, "decision.bands[0].below",
	 "'decision.bands[0].below' must be a number in (0, 1]"},
	{PHEAD "decision:\n  bands:\n    - {below: 1.5, decision: a}\n    - {decision: b}\n",
	 RBA_E_RANGE, 4, 15, "decision.bands[0].below",
	 "'decision.bands[0].below' must be a number in (0, 1]"},
	{PHEAD "decision:\n  bands:\n    - {below: 0.3, decision: a, color: red}\n"
	       "    - {decision: b}\n",
	 RBA_E_SCHEMA, 4, 33, "decision.bands[0].color",
	 "unknown key 'decision.bands[0].color'"},
	{PHEAD "decision:\n  bands:\n    - {decision: \"\"}\n", RBA_E_SCHEMA, 4, 18,
	 "decision.bands[0].decision", "'decision.bands[0].decision' must be a non-empty string"},
	{PHEAD "decision:\n  bands:\n    - {decision: {a: 1}}\n", RBA_E_SCHEMA, 4, 18,
	 "decision.bands[0].decision", "'decision.bands[0].decision' must be a non-empty string"},
	{PHEAD "decision: {rule: argmax}\ntolerance: {max_score_delta: -0.1}\n", RBA_E_RANGE, 3,
	 30, "tolerance.max_score_delta",
	 "'tolerance.max_score_delta' must be a number greater than or equal to 0"},
	{PHEAD "decision: {rule: argmax}\ntolerance: {max_flips: 1.5}\n", RBA_E_SCHEMA, 3, 24,
	 "tolerance.max_flips", "'tolerance.max_flips' must be an integer from 0 to 18446744073709551615"},
	{PHEAD "decision: {rule: argmax}\nnear_threshold: {margin: x}\n", RBA_E_SCHEMA, 3, 26,
	 "near_threshold.margin", "'near_threshold.margin' must be a number greater than or equal to 0"},
	{PHEAD "decision: {rule: argmax}\nnear_threshold: {require_bits: on}\n", RBA_E_SCHEMA, 3,
	 32, "near_threshold.require_bits", "'near_threshold.require_bits' must be true or false"},
	{PHEAD "decision: {rule: argmax}\nevidence: {min_near_cases: -1}\n", RBA_E_RANGE, 3, 28,
	 "evidence.min_near_cases",
	 "'evidence.min_near_cases' must be an integer from 0 to 18446744073709551615"},
	{PHEAD "decision: {rule: argmax}\nevidence: 3\n", RBA_E_SCHEMA, 3, 11, "evidence",
	 "'evidence' must be a mapping"},
	{"schema: rebuild-audit/pins/v1\ndecision: {rule: argmax}\n", RBA_E_SCHEMA, 1, 9,
	 "schema", "'schema' must be rebuild-audit/policy/v1"},
	{"schema: rebuild-audit/policy/v2\n", RBA_E_NEWER, 1, 9, "schema",
	 "'schema' rebuild-audit/policy/v2 is newer than this tool reads (rebuild-audit/policy/v1)"},
	{PHEAD "decision:\n  bands:\n    - &b {below: 0.3, decision: a}\n    - *b\n", RBA_E_SYNTAX,
	 4, 7, "", "anchors and aliases are not allowed"},
	{PHEAD "decision: {rule: argmax}\n--- {}\n", RBA_E_SYNTAX, 3, 1, "",
	 "more than one YAML document"},
	{PHEAD "decision: {rule: argmax\n", RBA_E_SYNTAX, 3, 1, "",
	 "did not find expected ',' or '}'"},
	{PHEAD "decision: {rule: \"arg\xe0\x80\x80max\"}\n", RBA_E_ENCODING, 2, 22, "",
	 "invalid UTF-8"},
};

START_TEST(test_policy_errors)
{
	const struct err_case *c = &policy_errors[_i];
	struct rba_detail d;
	struct policy *p = (struct policy *)1;
	int err;

	err = policy_parse(c->text, strlen(c->text), "p.yaml", &p, &d);
	ck_assert_msg(err == c->code, "case %d: code %d, want %d (%s)", _i, err, c->code,
		      d.reason);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(d.file, "p.yaml");
	ck_assert_str_eq(d.reason, c->reason);
	ck_assert_msg(d.line == c->line && d.col == c->col,
		      "case %d (%s): at %lu:%lu, want %lu:%lu", _i, c->reason, d.line,
		      d.col, c->line, c->col);
	ck_assert_str_eq(d.key, c->key);
}
END_TEST

/* Pads a valid pins text with a comment line up to exactly n bytes. */
static char *
padded_pins(size_t n)
{
	static const char base[] = HEAD "data: {label: c}\n#";
	char *t = malloc(n + 1);

	ck_assert_ptr_nonnull(t);
	memcpy(t, base, sizeof(base) - 1);
	memset(t + sizeof(base) - 1, 'x', n - (sizeof(base) - 1) - 1);
	t[n - 1] = '\n';
	t[n] = 0;
	return t;
}

START_TEST(test_size_cap)
{
	char path[] = "/tmp/rba-policy-XXXXXX";
	struct rba_detail d;
	struct pins *p;
	uint8_t *buf;
	size_t n;
	char *t;
	int fd;

	t = padded_pins(POLICY_MAX_FILE);
	ck_assert_int_eq(policy_pins_parse(t, POLICY_MAX_FILE, "big.yaml", &p, &d), 0);
	policy_pins_free(p);
	free(t);

	/* one byte over: the error points at that byte (line 5 is the comment) */
	t = padded_pins(POLICY_MAX_FILE + 1);
	ck_assert_int_eq(policy_pins_parse(t, POLICY_MAX_FILE + 1, "big.yaml", &p, &d),
			 RBA_E_LIMIT);
	ck_assert_str_eq(d.reason, "file is larger than 1048576 bytes");
	ck_assert_uint_eq(d.line, 5);
	ck_assert_uint_eq(d.col, POLICY_MAX_FILE - strlen(HEAD "data: {label: c}\n") + 1);

	/* from a file of twice the cap, only cap + 1 bytes are read */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, t, POLICY_MAX_FILE + 1), POLICY_MAX_FILE + 1);
	ck_assert_int_eq(write(fd, t, POLICY_MAX_FILE), POLICY_MAX_FILE);
	close(fd);
	ck_assert_int_eq(policy_file_read(path, &buf, &n, &d), 0);
	ck_assert_uint_eq(n, POLICY_MAX_FILE + 1);
	ck_assert_uint_eq(buf[n], 0);
	free(buf);
	ck_assert_int_eq(policy_pins_load(path, &p, &d), RBA_E_LIMIT);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(d.file, path);
	ck_assert_uint_eq(d.line, 5);
	unlink(path);
	free(t);
}
END_TEST

START_TEST(test_node_cap_and_depth)
{
	struct rba_buf b;
	struct rba_detail d;
	struct pins *p;
	size_t i;

	rba_buf_init(&b);
	rba_buf_printf(&b, HEAD "data:\n  label: c\n  exclude: [");
	for (i = 0; i < POLICY_MAX_NODES; i++)
		rba_buf_printf(&b, "%sc%zu", i ? "," : "", i);
	rba_buf_printf(&b, "]\n");
	ck_assert_int_eq(policy_pins_parse(b.p, b.len, "n.yaml", &p, &d), RBA_E_LIMIT);
	ck_assert_str_eq(d.reason, "more than 4096 YAML nodes");
	ck_assert_uint_eq(d.line, 6);
	rba_buf_release(&b);

	/* 65 names: under the node cap, over the list cap */
	rba_buf_init(&b);
	rba_buf_printf(&b, HEAD "data:\n  label: c\n  exclude: [");
	for (i = 0; i <= PINS_MAX_LIST; i++)
		rba_buf_printf(&b, "%sc%zu", i ? "," : "", i);
	rba_buf_printf(&b, "]\n");
	ck_assert_int_eq(policy_pins_parse(b.p, b.len, "n.yaml", &p, &d), RBA_E_LIMIT);
	ck_assert_str_eq(d.reason, "'data.exclude' has more than 64 entries");
	ck_assert_uint_eq(d.line, 6);
	ck_assert_uint_eq(d.col, 12);
	rba_buf_release(&b);

	/* a string over its cap */
	rba_buf_init(&b);
	rba_buf_printf(&b, HEAD "data:\n  label: %0257d\n", 7);
	ck_assert_int_eq(policy_pins_parse(b.p, b.len, "n.yaml", &p, &d), RBA_E_LIMIT);
	ck_assert_str_eq(d.reason, "'data.label' is longer than 256 bytes");
	rba_buf_release(&b);

	/* eight levels are allowed, nine are not */
	ck_assert_int_eq(policy_yaml_check("a: [[[[[[[1]]]]]]]\n", 19, "d.yaml", &d), 0);
	ck_assert_int_eq(policy_yaml_check("a: [[[[[[[[1]]]]]]]]\n", 21, "d.yaml", &d),
			 RBA_E_LIMIT);
	ck_assert_str_eq(d.reason, "nesting deeper than 8 levels");
	ck_assert_uint_eq(d.line, 1);
	ck_assert_uint_eq(d.col, 11);
}
END_TEST

/* ---- numbers ---------------------------------------------------------- */

START_TEST(test_numbers_text)
{
	static const char *const cases[][2] = {
		{"0.02", "0.02"},	{"2e-2", "0.02"},	{"2E-2", "0.02"},
		{"+0.5", "0.5"},	{".5", "0.5"},		{"5.", "5.0"},
		{"1", "1.0"},		{"1e-8", "1.0e-8"},	{"1.0e-8", "1.0e-8"},
		{"0.1", "0.1"},		{"1e3", "1000.0"},	{"1e16", "1.0e+16"},
		{"123456789012345678901", "1.2345678901234568e+20"},
		{"0.30000000000000004", "0.30000000000000004"},
		{"0.3000000000000000444", "0.30000000000000004"},
		{"0.0001", "0.0001"},	{"0.00001", "1.0e-5"},
		{"4.9e-324", "4.94065645841247e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
	};
	char text[256], want[128], *out;
	struct pins *p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), HEAD "data: {label: c}\ntrain: {lr: %s}\n",
			 cases[i][0]);
		p = pins_ok(text);
		out = pins_text(p);
		snprintf(want, sizeof(want), "\n  lr: %s\n", cases[i][1]);
		ck_assert_msg(strstr(out, want) != NULL, "lr %s: want %s", cases[i][0],
			      cases[i][1]);
		policy_pins_free(p);
		free(out);
	}
}
END_TEST

/* Significant digits of the mantissa ("1.0e-8" and "100.0" have 1). */
static int
significant_digits(const char *t)
{
	int n = 0, zeros = 0, started = 0;

	for (; *t && *t != 'e'; t++) {
		if (*t < '0' || *t > '9')
			continue;
		if (*t != '0')
			started = 1;
		if (!started)
			continue;
		if (*t == '0') {
			zeros++;
		} else {
			n += zeros + 1;
			zeros = 0;
		}
	}
	return n;
}

START_TEST(test_numbers_shortest_round_trip)
{
	char t[40], t17[40];
	double x, y;
	uint64_t bits, state = 0x9e3779b97f4a7c15u;
	int i, prec;

	for (i = 0; i < 20000; i++) {
		/* xorshift64: any bit pattern, finite ones kept */
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		bits = state;
		memcpy(&x, &bits, sizeof(x));
		if (!isfinite(x))
			continue;
		policy_scalar_num_format(x, t);
		ck_assert_int_eq(policy_scalar_num_parse(t, strlen(t), &y), 0);
		ck_assert_msg(y == x, "%s does not read back", t);
		/* shortest: one digit fewer would not read back */
		prec = significant_digits(t);
		ck_assert_int_le(prec, 17);
		if (prec > 15) {
			snprintf(t17, sizeof(t17), "%.*g", prec - 1, x);
			ck_assert_msg(strtod(t17, NULL) != x, "%s is not the shortest", t);
		}
	}
	policy_scalar_num_format(-0.0, t);
	ck_assert_str_eq(t, "0.0");
	ck_assert_int_eq(policy_scalar_num_parse("-0", 2, &y), 0);
	ck_assert(!signbit(y));
	ck_assert_int_eq(policy_scalar_num_parse("1e", 2, &y), RBA_E_SYNTAX);
	ck_assert_int_eq(policy_scalar_num_parse("-", 1, &y), RBA_E_SYNTAX);
	ck_assert_int_eq(policy_scalar_num_parse(".", 1, &y), RBA_E_SYNTAX);
	ck_assert_int_eq(policy_scalar_num_parse("1.2.3", 5, &y), RBA_E_SYNTAX);
	ck_assert_int_eq(policy_scalar_num_parse("-Infinity", 9, &y), RBA_E_RANGE);
	ck_assert_int_eq(policy_scalar_num_parse("-1e999", 6, &y), RBA_E_RANGE);
	{
		uint64_t u;
		ck_assert_int_eq(policy_scalar_uint_parse("18446744073709551615", 20, &u), 0);
		ck_assert(u == UINT64_MAX);
		ck_assert_int_eq(policy_scalar_uint_parse("18446744073709551616", 20, &u),
				 RBA_E_RANGE);
		ck_assert_int_eq(policy_scalar_uint_parse("+7", 2, &u), 0);
		ck_assert_uint_eq(u, 7);
		ck_assert_int_eq(policy_scalar_uint_parse("007", 3, &u), RBA_E_SYNTAX);
		ck_assert_int_eq(policy_scalar_uint_parse("", 0, &u), RBA_E_SYNTAX);
		ck_assert_int_eq(policy_scalar_uint_parse("-1", 2, &u), RBA_E_RANGE);
	}
}
END_TEST

/*
 * A locale with a decimal comma must not change what a file means.
 * Without one the test proves nothing, so it fails: `make test-locale`
 * generates de_DE.UTF-8.
 */
START_TEST(test_numbers_locale)
{
	static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
					    "fr_FR.utf8"};
	struct pins *p;
	char *text;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (setlocale(LC_ALL, names[i]) != NULL)
			break;
	if (i == sizeof(names) / sizeof(names[0]))
		ck_abort_msg("no decimal-comma locale (de_DE.UTF-8 or fr_FR.UTF-8) "
			     "is installed: run 'make test-locale' as root, or "
			     "'localedef -i de_DE -f UTF-8 de_DE.UTF-8'");
	ck_assert_str_eq(localeconv()->decimal_point, ",");
	p = pins_ok(HEAD "data: {label: c}\ntrain: {lr: 0.25, eps: 2.5e-9}\n");
	ck_assert(p->train.lr == 0.25);
	text = pins_text(p);
	ck_assert_ptr_nonnull(strstr(text, "  lr: 0.25\n"));
	ck_assert_ptr_nonnull(strstr(text, "  eps: 2.5e-9\n"));
	free(text);
	policy_pins_free(p);
	setlocale(LC_ALL, "C");
}
END_TEST

/* ---- policies --------------------------------------------------------- */

START_TEST(test_policy_fixture)
{
	struct rba_detail d;
	struct rba_digest want;
	struct policy *p;
	struct rba_buf b;
	uint8_t *bytes;
	size_t n;

	bytes = slurp(FIXTURES "/policy/credit.yaml", &n);
	ck_assert_int_eq(policy_load(FIXTURES "/policy/credit.yaml", &p, &d), 0);
	ck_assert_int_eq(p->argmax, 0);
	ck_assert_uint_eq(p->nbands, 3);
	ck_assert(p->bands[0].has_below && p->bands[0].below == 0.30);
	ck_assert_str_eq(p->bands[0].decision, "approve");
	ck_assert(p->bands[1].has_below && p->bands[1].below == 0.50);
	ck_assert_str_eq(p->bands[1].decision, "refer");
	ck_assert(!p->bands[2].has_below);
	ck_assert_str_eq(p->bands[2].decision, "decline");
	ck_assert(p->max_score_delta == 0.0005);
	ck_assert_uint_eq(p->max_flips, 0);
	ck_assert(p->near_margin == 0.001);
	ck_assert_int_eq(p->near_require_bits, 1);
	ck_assert_uint_eq(p->min_near_cases, 1);
	/* the exact bytes and their digest, as sha256sum sees them */
	ck_assert_uint_eq(p->text_len, n);
	ck_assert(memcmp(p->text, bytes, n) == 0);
	ck_assert_uint_eq((unsigned char)p->text[n], 0);
	rba_digest_bytes(bytes, n, &want);
	ck_assert(rba_digest_equal(&p->digest, &want));
	rba_buf_init(&b);
	policy_canonical(p, &b);
	ck_assert_str_eq(rba_buf_cstr(&b), credit_canonical);
	rba_buf_release(&b);
	policy_free(p);
	policy_free(NULL);
	free(bytes);
}
END_TEST

START_TEST(test_policy_argmax_defaults_round_trip)
{
	struct rba_detail d;
	struct policy *p, *q;
	struct rba_buf b1, b2;
	static const char *const texts[] = {
		PHEAD "decision: {rule: argmax}\n",
		PHEAD "decision:\n  bands:\n    - decision: \"accept all\"\n",
		PHEAD "decision:\n  bands:\n    - {below: 0.1, decision: a}\n"
		      "    - {below: 0.30000000000000004, decision: \"2\"}\n"
		      "    - {below: 1, decision: c}\n    - {below: null, decision: d}\n"
		      "tolerance: {max_score_delta: 1e-6, max_flips: 18446744073709551615}\n"
		      "near_threshold: {margin: 0.0025, require_bits: false}\n"
		      "evidence: {min_near_cases: 10}\n",
	};
	size_t i;

	ck_assert_int_eq(policy_load(FIXTURES "/policy/argmax.yaml", &p, &d), 0);
	ck_assert_int_eq(p->argmax, 1);
	ck_assert_uint_eq(p->nbands, 0);
	ck_assert(p->max_score_delta == 0.001);
	policy_free(p);

	ck_assert_int_eq(policy_parse(texts[0], strlen(texts[0]), "p", &p, &d), 0);
	ck_assert(p->max_score_delta == 0 && p->max_flips == 0);
	ck_assert(p->near_margin == 0 && p->near_require_bits == 0);
	ck_assert_uint_eq(p->min_near_cases, 0);
	policy_free(p);

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		ck_assert_int_eq(policy_parse(texts[i], strlen(texts[i]), "p", &p, &d), 0);
		rba_buf_init(&b1);
		rba_buf_init(&b2);
		policy_canonical(p, &b1);
		rba_buf_cstr(&b1);
		ck_assert_int_eq(policy_parse(b1.p, b1.len, "c", &q, &d), 0);
		policy_canonical(q, &b2);
		ck_assert_str_eq(rba_buf_cstr(&b1), rba_buf_cstr(&b2));
		ck_assert_int_eq(p->argmax, q->argmax);
		ck_assert_uint_eq(p->nbands, q->nbands);
		ck_assert(p->max_flips == q->max_flips);
		ck_assert(p->max_score_delta == q->max_score_delta);
		if (p->nbands > 1)
			ck_assert(p->bands[1].below == q->bands[1].below);
		/* the digest is of the bytes read, not of the canonical text */
		ck_assert(!rba_digest_equal(&p->digest, &q->digest) ||
			  strcmp(p->text, q->text) == 0);
		rba_buf_release(&b1);
		rba_buf_release(&b2);
		policy_free(p);
		policy_free(q);
	}
}
END_TEST

START_TEST(test_decide_bands)
{
	struct rba_detail d;
	struct policy *p;
	double dist;

	ck_assert_int_eq(policy_load(FIXTURES "/policy/credit.yaml", &p, &d), 0);
	ck_assert_str_eq(policy_decide(p, 0.0, &dist), "approve");
	ck_assert(dist == 0.30);
	ck_assert_str_eq(policy_decide(p, nextafter(0.30, 0), &dist), "approve");
	ck_assert(dist > 0 && dist < 1e-15);
	/* exactly at an edge: the next band */
	ck_assert_str_eq(policy_decide(p, 0.30, &dist), "refer");
	ck_assert(dist == 0);
	ck_assert_str_eq(policy_decide(p, 0.31, &dist), "refer");
	ck_assert(fabs(dist - 0.01) < 1e-12);
	ck_assert_str_eq(policy_decide(p, 0.45, &dist), "refer");
	ck_assert(fabs(dist - 0.05) < 1e-12);
	ck_assert_str_eq(policy_decide(p, nextafter(0.50, 0), NULL), "refer");
	ck_assert_str_eq(policy_decide(p, 0.50, &dist), "decline");
	ck_assert(dist == 0);
	ck_assert_str_eq(policy_decide(p, 0.9, &dist), "decline");
	ck_assert(fabs(dist - 0.4) < 1e-12);
	ck_assert_str_eq(policy_decide(p, 1.0, &dist), "decline");
	ck_assert_ptr_null(policy_decide(p, NAN, &dist));
	ck_assert(isinf(dist));
	policy_free(p);

	ck_assert_int_eq(policy_parse(PHEAD "decision: {bands: [{decision: ok}]}\n",
				      strlen(PHEAD "decision: {bands: [{decision: ok}]}\n"),
				      "p", &p, &d), 0);
	ck_assert_str_eq(policy_decide(p, 0.7, &dist), "ok");
	ck_assert(isinf(dist) && dist > 0);
	policy_free(p);

	ck_assert_int_eq(policy_load(FIXTURES "/policy/argmax.yaml", &p, &d), 0);
	ck_assert_ptr_null(policy_decide(p, 0.5, &dist));
	ck_assert(isinf(dist));
	policy_free(p);
}
END_TEST

START_TEST(test_decide_argmax)
{
	const double three[] = {0.2, 0.5, 0.3}, tie[] = {0.4, 0.4, 0.2},
		     two[] = {0.3, 0.7}, one[] = {1.0}, bad[] = {0.5, NAN};
	double dist;

	ck_assert_uint_eq(policy_decide_argmax(NULL, three, 3, &dist), 1);
	ck_assert(fabs(dist - 0.1) < 1e-12);
	ck_assert_uint_eq(policy_decide_argmax(NULL, tie, 3, &dist), 0);
	ck_assert(dist == 0);
	/* two classes: the same distance as a band edge at 0.5 */
	ck_assert_uint_eq(policy_decide_argmax(NULL, two, 2, &dist), 1);
	ck_assert(fabs(dist - fabs(0.7 - 0.5)) < 1e-12);
	ck_assert_uint_eq(policy_decide_argmax(NULL, one, 1, &dist), 0);
	ck_assert(isinf(dist));
	ck_assert_uint_eq(policy_decide_argmax(NULL, one, 0, &dist), SIZE_MAX);
	ck_assert_uint_eq(policy_decide_argmax(NULL, bad, 2, &dist), SIZE_MAX);
	ck_assert(isinf(dist));
	ck_assert_uint_eq(policy_decide_argmax(NULL, three, 3, NULL), 1);
}
END_TEST

/* ---- kinds, reading, names, versions --------------------------------- */

START_TEST(test_file_kind)
{
	static const struct {
		const char *text;
		enum policy_file_kind kind;
	} cases[] = {
		{"schema: rebuild-audit/pins/v1\n", POLICY_KIND_PINS},
		{"schema: rebuild-audit/pins/v9\n", POLICY_KIND_PINS},
		{"schema: \"rebuild-audit/policy/v1\"\n", POLICY_KIND_POLICY},
		{"a: {schema: x, b: [1, {c: d}]}\nz: [1, 2]\nschema: rebuild-audit/policy/v1\n",
		 POLICY_KIND_POLICY},
		/* the schema comes before a byte libyaml would refuse */
		{"schema: rebuild-audit/pins/v1\nversion: \xff\n", POLICY_KIND_PINS},
		{"schema: rebuild-audit/pins/v1\nbroken: [\n", POLICY_KIND_PINS},
		{"a: {schema: rebuild-audit/pins/v1}\n", POLICY_KIND_UNKNOWN},
		{"schema: [rebuild-audit/pins/v1]\n", POLICY_KIND_UNKNOWN},
		{"schema: rebuild-audit/other/v1\n", POLICY_KIND_UNKNOWN},
		{"schema: rebuild-audit/pins/\n", POLICY_KIND_UNKNOWN},
		{"- schema: rebuild-audit/pins/v1\n", POLICY_KIND_UNKNOWN},
		{"x: [\nschema: rebuild-audit/pins/v1\n", POLICY_KIND_UNKNOWN},
		{"", POLICY_KIND_UNKNOWN},
		{"plain text\n", POLICY_KIND_UNKNOWN},
	};
	enum policy_file_kind k;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		k = 99;
		ck_assert_int_eq(policy_file_kind(cases[i].text, strlen(cases[i].text), &k), 0);
		ck_assert_msg(k == cases[i].kind, "case %zu: kind %d", i, (int)k);
	}
}
END_TEST

START_TEST(test_yaml_check_and_read)
{
	struct rba_detail d;
	struct pins *p = (struct pins *)1;
	struct policy *q = (struct policy *)1;
	uint8_t *buf;
	size_t n;

	ck_assert_int_eq(policy_yaml_check("a: 1\n", 5, "y", &d), 0);
	ck_assert_int_eq(policy_yaml_check("a: *x\n", 6, "y", &d), RBA_E_SYNTAX);
	ck_assert_str_eq(d.reason, "anchors and aliases are not allowed");
	ck_assert_uint_eq(d.col, 4);

	ck_assert_int_eq(policy_file_read(FIXTURES "/no-such-file.yaml", &buf, &n, &d), ENOENT);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(policy_pins_load(FIXTURES "/no-such-file.yaml", &p, &d), ENOENT);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(d.file, FIXTURES "/no-such-file.yaml");
	ck_assert_int_eq(policy_load(FIXTURES, &q, &d), EISDIR);
	ck_assert_ptr_null(q);
	/* the detail is optional */
	ck_assert_int_eq(policy_pins_parse("x", 1, "t", &p, NULL), RBA_E_SCHEMA);
	ck_assert_int_eq(policy_parse("x", 1, NULL, &q, NULL), RBA_E_SCHEMA);
}
END_TEST

START_TEST(test_names_and_version)
{
	char longname[PINS_MAX_NAME + 2];
	const char *v = policy_yaml_version();

	ck_assert(policy_name_valid("credit-2026-11"));
	ck_assert(policy_name_valid("a"));
	ck_assert(policy_name_valid("_x.Y-9"));
	ck_assert(policy_name_valid("2026"));
	ck_assert(!policy_name_valid(""));
	ck_assert(!policy_name_valid(".hidden"));
	ck_assert(!policy_name_valid("-v"));
	ck_assert(!policy_name_valid("a/b"));
	ck_assert(!policy_name_valid("a b"));
	ck_assert(!policy_name_valid("\xc3\xa9"));
	memset(longname, 'a', sizeof(longname));
	longname[PINS_MAX_NAME] = 0;
	ck_assert(policy_name_valid(longname));
	longname[PINS_MAX_NAME] = 'a';
	longname[PINS_MAX_NAME + 1] = 0;
	ck_assert(!policy_name_valid(longname));

	ck_assert_ptr_nonnull(v);
	ck_assert(v[0] >= '0' && v[0] <= '9' && strchr(v, '.') != NULL);
}
END_TEST

/* ---- the check command ------------------------------------------------ */

static const struct cli_command check_row = {"check", cmd_check, "check FILE",
					     "validate a pins or policy file"};

/* Runs cmd_check with stdout and stderr in files; returns its status. */
static int
run_check(int json, const char *file, char **out, char **err)
{
	char opath[] = "/tmp/rba-check-out-XXXXXX", epath[] = "/tmp/rba-check-err-XXXXXX";
	char *argv[] = {"check", (char *)file, NULL};
	int ofd = mkstemp(opath), efd = mkstemp(epath), o1, e1, status;
	struct cli_ctx ctx;
	size_t n;

	ck_assert(ofd >= 0 && efd >= 0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.prog = "rebuild-audit";
	ctx.cmd = &check_row;
	ctx.json = json;
	fflush(stdout);
	fflush(stderr);
	o1 = dup(1);
	e1 = dup(2);
	dup2(ofd, 1);
	dup2(efd, 2);
	status = cmd_check(&ctx, file != NULL ? 2 : 1, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(o1, 1);
	dup2(e1, 2);
	close(o1);
	close(e1);
	close(ofd);
	close(efd);
	*out = (char *)slurp(opath, &n);
	*err = (char *)slurp(epath, &n);
	unlink(opath);
	unlink(epath);
	return status;
}

START_TEST(test_check_invalid_corpus)
{
	DIR *dir;
	struct dirent *e;
	char errpath[512], cwd[4096], *want, *out, *err;
	size_t n, count = 0, len;

	/* Each file is checked by its bare name, as the .err lines expect. */
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(FIXTURES "/invalid"), 0);
	dir = opendir(".");
	ck_assert_ptr_nonnull(dir);
	while ((e = readdir(dir)) != NULL) {
		len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(errpath, sizeof(errpath), "%s.err", e->d_name);
		want = (char *)slurp(errpath, &n);
		ck_assert_msg(run_check(0, e->d_name, &out, &err) == 2, "%s: not exit 2",
			      e->d_name);
		ck_assert_msg(strcmp(err, want) == 0, "%s:\n got %s want %s", e->d_name, err,
			      want);
		ck_assert_msg(out[0] == 0, "%s: printed %s", e->d_name, out);
		free(want);
		free(out);
		free(err);
		count++;
	}
	closedir(dir);
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_uint_ge(count, 20);
}
END_TEST

START_TEST(test_check_valid_files)
{
	struct rba_digest h;
	struct rba_detail d;
	struct pins *p;
	char *out, *err, *canon, hex[RBA_DIGEST_TEXT_LEN + 1], want[128];
	uint8_t *bytes;
	size_t n;

	ck_assert_int_eq(run_check(0, FIXTURES "/pins/example-minimal.yaml", &out, &err), 0);
	ck_assert_str_eq(err, "");
	ck_assert(strncmp(out, "kind: pins\n", 11) == 0);
	ck_assert_int_eq(policy_pins_load(FIXTURES "/pins/example-minimal.yaml", &p, &d), 0);
	canon = pins_text(p);
	ck_assert(strncmp(out + 11, canon, strlen(canon)) == 0);
	policy_pins_config_hash(p, &h);
	policy_pins_free(p);
	rba_digest_format(&h, hex);
	snprintf(want, sizeof(want), "config: %s\n", hex);
	ck_assert_str_eq(out + 11 + strlen(canon), want);
	free(canon);
	free(out);
	free(err);

	ck_assert_int_eq(run_check(0, FIXTURES "/policy/credit.yaml", &out, &err), 0);
	ck_assert(strncmp(out, "kind: policy\n", 13) == 0);
	bytes = slurp(FIXTURES "/policy/credit.yaml", &n);
	rba_digest_bytes(bytes, n, &h);
	rba_digest_format(&h, hex);
	snprintf(want, sizeof(want), "digest: %s\n", hex);
	ck_assert_str_eq(out + 13 + strlen(credit_canonical), want);
	free(bytes);
	free(out);
	free(err);

	ck_assert_int_eq(run_check(1, FIXTURES "/policy/credit.yaml", &out, &err), 0);
	snprintf(want, sizeof(want), "\"kind\": \"policy\", \"digest\": \"%s\"", hex);
	ck_assert_ptr_nonnull(strstr(out, want));
	ck_assert_ptr_nonnull(strstr(out, "\"canonical\": \"schema: rebuild-audit/policy/v1\\n"));
	ck_assert(out[0] == '{' && strcmp(out + strlen(out) - 2, "}\n") == 0);
	free(out);
	free(err);

	/* usage and unreadable files */
	ck_assert_int_eq(run_check(0, NULL, &out, &err), 2);
	ck_assert(strncmp(err, "rebuild-audit: bad usage 'check': expected one FILE\n", 52) == 0);
	free(out);
	free(err);
	ck_assert_int_eq(run_check(0, FIXTURES "/none.yaml", &out, &err), 2);
	ck_assert_ptr_nonnull(strstr(err, "rebuild-audit: cannot read '" FIXTURES "/none.yaml': "));
	free(out);
	free(err);
}
END_TEST

START_TEST(test_check_generated)
{
	char dir[] = "/tmp/rba-check-XXXXXX", cwd[4096], *out, *err, want[256];
	char *t;
	FILE *f;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chdir(dir), 0);
	t = padded_pins(POLICY_MAX_FILE + 1);
	f = fopen("big.yaml", "w");
	ck_assert_int_eq(fwrite(t, 1, POLICY_MAX_FILE + 1, f), POLICY_MAX_FILE + 1);
	fclose(f);
	free(t);
	ck_assert_int_eq(run_check(0, "big.yaml", &out, &err), 2);
	snprintf(want, sizeof(want),
		 "rebuild-audit: invalid pins 'big.yaml:5:%zu': file is larger than 1048576 bytes\n",
		 (size_t)POLICY_MAX_FILE - strlen(HEAD "data: {label: c}\n") + 1);
	ck_assert_str_eq(err, want);
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
	unlink("big.yaml");

	/* not YAML and not a known kind: where it breaks */
	f = fopen("broken.yaml", "w");
	fputs("a: [1, 2\n", f);
	fclose(f);
	ck_assert_int_eq(run_check(0, "broken.yaml", &out, &err), 2);
	ck_assert_str_eq(err, "rebuild-audit: cannot check 'broken.yaml:2:1': did not find "
			      "expected ',' or ']'\n");
	free(out);
	free(err);
	unlink("broken.yaml");
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Reason statements: the level's own, else the column's; in the
 * canonical form only when present, which parses back to them; a policy
 * without any keeps its canonical text. */
START_TEST(test_policy_statements)
{
	static const char base[] =
		"schema: rebuild-audit/policy/v1\n"
		"decision: {bands: [{below: 0.5, decision: approve}, {decision: decline}]}\n";
	static const char with[] =
		"schema: rebuild-audit/policy/v1\n"
		"decision: {bands: [{below: 0.5, decision: approve}, {decision: decline}]}\n"
		"statements:\n"
		"  age: Age of the applicant\n"
		"  savings:\n"
		"    A61: \"Savings below 100 DM: few\"\n"
		"    \"*\": Savings account\n"
		"  job:\n"
		"    A171: Unskilled\n";
	struct policy *p = NULL, *q = NULL, *plain = NULL;
	struct rba_detail d;
	struct rba_buf b, c;

	ck_assert_int_eq(policy_parse(with, strlen(with), "p", &p, &d), 0);
	ck_assert_uint_eq(p->nstatements, 4);
	ck_assert_str_eq(policy_statement(p, "age", "41"), "Age of the applicant");
	ck_assert_str_eq(policy_statement(p, "savings", "A61"), "Savings below 100 DM: few");
	ck_assert_str_eq(policy_statement(p, "savings", "A65"), "Savings account");
	ck_assert_str_eq(policy_statement(p, "job", "A171"), "Unskilled");
	ck_assert_ptr_null(policy_statement(p, "job", "A172"));
	ck_assert_ptr_null(policy_statement(p, "telephone", "A191"));
	rba_buf_init(&b);
	policy_canonical(p, &b);
	ck_assert(strstr(rba_buf_cstr(&b), "statements:\n  age: ") != NULL);
	ck_assert_int_eq(policy_parse(b.p, b.len, "canonical", &q, &d), 0);
	ck_assert_uint_eq(q->nstatements, 4);
	ck_assert_str_eq(policy_statement(q, "savings", "A61"), "Savings below 100 DM: few");
	ck_assert_str_eq(policy_statement(q, "savings", "A62"), "Savings account");
	rba_buf_init(&c);
	policy_canonical(q, &c);
	ck_assert_uint_eq(b.len, c.len);
	ck_assert(memcmp(b.p, c.p, b.len) == 0);
	rba_buf_release(&c);
	/* without statements: no statements section */
	ck_assert_int_eq(policy_parse(base, strlen(base), "p", &plain, &d), 0);
	ck_assert_uint_eq(plain->nstatements, 0);
	rba_buf_init(&c);
	policy_canonical(plain, &c);
	ck_assert(strstr(rba_buf_cstr(&c), "statements") == NULL);
	rba_buf_release(&c);
	rba_buf_release(&b);
	policy_free(p);
	policy_free(q);
	policy_free(plain);
}
END_TEST

Suite *
suite_policy(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("pins");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_pins_fixture_fields);
	tcase_add_test(tc, test_policy_statements);
	tcase_add_test(tc, test_pins_defaults_canonical);
	tcase_add_test(tc, test_pins_canonical_strings);
	tcase_add_test(tc, test_pins_round_trip);
	tcase_add_test(tc, test_pins_dup);
	tcase_add_test(tc, test_pins_exec);
	tcase_add_test(tc, test_pins_column_positions);
	tcase_add_test(tc, test_hash_is_of_canonical_blocks);
	tcase_add_test(tc, test_hash_reformatting);
	tcase_add_test(tc, test_hash_semantic_changes);
	tcase_add_loop_test(tc, test_pins_errors, 0,
			    sizeof(pins_errors) / sizeof(pins_errors[0]));
	tcase_add_test(tc, test_size_cap);
	tcase_add_test(tc, test_node_cap_and_depth);
	tcase_add_test(tc, test_numbers_text);
	tcase_add_test(tc, test_numbers_shortest_round_trip);
	tcase_add_test(tc, test_numbers_locale);
	suite_add_tcase(s, tc);

	tc = tcase_create("policy");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_policy_fixture);
	tcase_add_test(tc, test_policy_argmax_defaults_round_trip);
	tcase_add_loop_test(tc, test_policy_errors, 0,
			    sizeof(policy_errors) / sizeof(policy_errors[0]));
	tcase_add_test(tc, test_decide_bands);
	tcase_add_test(tc, test_decide_argmax);
	tcase_add_test(tc, test_file_kind);
	tcase_add_test(tc, test_yaml_check_and_read);
	tcase_add_test(tc, test_names_and_version);
	suite_add_tcase(s, tc);

	tc = tcase_create("check");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_check_invalid_corpus);
	tcase_add_test(tc, test_check_valid_files);
	tcase_add_test(tc, test_check_generated);
	suite_add_tcase(s, tc);
	return s;
}
