/*
 * main.c - global options, --version, the command table and exit
 * statuses.
 *
 *   rebuild-audit [-S STORE] [--json] [-q] [-v] [--wait SECONDS] COMMAND [ARGS]
 *
 * Exit statuses: 0 yes, 1 the answer is no, 2 could not answer.
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/digest.h"
#include "policy/policy.h"
#include "train/kernel.h"
#include "train/trainer.h"
#include "store/store.h"

#ifndef RBA_GIT_REV
#define RBA_GIT_REV "unknown"
#endif

/* --version: tool, trainer ABI and every linked library's runtime
 * version, on stdout; 0, or 2 after a diagnostic. */
static int
version_print(int json)
{
	FILE *f = stdout;
	const char *names[] = { "libsodium", "lmdb", "zstd", "libyaml",
				"openblas", "openblas.core", "libc", "sha256" };
	const char *vals[] = { rba_sodium_version(), store_lmdb_version(),
			       store_zstd_version(), policy_yaml_version(),
			       kernel_blas_config(), kernel_blas_corename(),
			       gnu_get_libc_version(), rba_sha256_engine() };
	size_t n = sizeof(names) / sizeof(names[0]);

	if (json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "tool", RBA_TOOL_NAME);
		rba_json_w_str(&w, "version", RBA_TOOL_VERSION);
		rba_json_w_str(&w, "revision", RBA_GIT_REV);
		rba_json_w_u64(&w, "trainer_abi", rebuild_abi_current());
		rba_json_w_open(&w, "libraries", '{');
		for (size_t i = 0; i < n; i++)
			rba_json_w_str(&w, names[i], vals[i]);
		rba_json_w_close(&w, '}');
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	}
	fprintf(f, "%s %s (revision %s)\n", RBA_TOOL_NAME, RBA_TOOL_VERSION,
		RBA_GIT_REV);
	fprintf(f, "trainer ABI %u (%s)\n", (unsigned)rebuild_abi_current(),
		rebuild_abi_describe(rebuild_abi_current()));
	for (uint32_t abi = 1; abi <= rebuild_abi_max(); abi++)
		if (abi != rebuild_abi_current())
			fprintf(f, "trainer ABI %u (%s; pins trainer_abi: %u)\n",
				(unsigned)abi, rebuild_abi_describe(abi),
				(unsigned)abi);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%-14s %s\n", names[i], vals[i]);
	return 0;
}

/* In alphabetical order (--help lists them so); see the checklist in
 * commands.h. */
static const struct cli_command commands[] = {
	{ "audit", cmd_audit,
	  "audit VERSION... [--policy P] [--threads N]\n"
	  "audit --all [--policy P] [--threads N]\n"
	  "audit --all [--shard K/N] [--split balanced|hash] --records-out DIR -k KEY [--head DIGEST] [--passphrase-file F] [--threads N]\n"
	  "audit --all --shard K/N [--split balanced|hash] --list [--json]\n"
	  "audit --all --shards N [--split balanced|hash] --list [--json]",
	  "rebuild, compare, score the sample: bit-identical, metric-equivalent or not" },
	{ "bisect", cmd_bisect,
	  "bisect BASE CAND --gate GATE.yaml [--seeds A-B] [-j N] [--snapshot FILE] [--json]",
	  "find the edit between two pins files that fails a gate" },
	{ "check", cmd_check, "check FILE",
	  "validate a pins or policy file; print its canonical form and hash" },
	{ "compare", cmd_compare,
	  "compare BASE CAND --seeds A-B [--hypothesis TEXT] [--success EXPR] [--alpha A] [-j N] [--snapshot FILE] [--allow-contract-change] [--plot FILE.svg] [--force] [--json]\n"
	  "compare RUN_ID RUN_ID [--hypothesis TEXT] [--success EXPR] [--alpha A] [--allow-contract-change] [--plot FILE.svg] [--force] [--json]",
	  "paired comparison at shared seeds against the noise floor" },
	{ "diff", cmd_diff,
	  "diff A B [--json]\n"
	  "diff --store VERSION [--audit ID] [--json]",
	  "where two artifacts (ours, or XGBoost JSON models) differ: per tensor, or the first tree that differs" },
	{ "dispute", cmd_dispute,
	  "dispute VERSION CASE [--policy P] [--show-inputs] [--reasons N] [--rebuild]\n"
	  "dispute VERSION CASE --export -k KEY -o FILE [--passphrase-file F] [--policy P] [--reasons N] [--rebuild]",
	  "answer a disputed decision with its reasons: it stands, or escalate" },
	{ "env", cmd_env, "env [--mode strict|fast] [--threads N] [--pins PINS]",
	  "print the current environment record and its digest" },
	{ "evaluate", cmd_evaluate,
	  "evaluate PINS|ARTIFACT [--pins PINS] [--snapshot FILE] [--subset N|all] [--reduction mean|sum] [--dropout on|off] [--input-scale F] [--json]",
	  "metrics under an evaluation contract, and its fingerprint" },
	{ "export", cmd_export,
	  "export VERSION -k KEY -o FILE [--audit ID|latest] [--passphrase-file F] [--include-inputs] [--cases] [--origin O | --checkpoint CK] [--dsse] [--force]\n"
	  "export VERSION --vary [--run ID] -k KEY -o FILE [--passphrase-file F] [--force]",
	  "write a signed, self-contained evidence file of an audit" },
	{ "gate", cmd_gate,
	  "gate calibrate SWEEP --k K -o GATE.yaml [--force] [--json]\n"
	  "gate validate GATE.yaml PINS --seeds A-B [--max-false-alarms N] [-j N] [--snapshot FILE] [--json]\n"
	  "gate check GATE.yaml PINS|RUN [--seeds A-B] [-j N] [--snapshot FILE] [--allow-contract-change] [--json]",
	  "a calibrated regression threshold: make it, measure its false alarms, apply it" },
	{ "history", cmd_history,
	  "history [VERSION]\n"
	  "history --verify [--head DIGEST]\n"
	  "history head\n"
	  "history import DIR... -p PUB... [--split balanced|hash] [--set-aside]\n"
	  "history vkey -p PUB [--origin O] [--json]\n"
	  "history checkpoint -k KEY -o CK [--origin O] [--passphrase-file F] [--force] [--json]\n"
	  "history cosign CK -k KEY --vkey VKEY --state FILE -o CK2 [--origin O] [--passphrase-file F] [--force]\n"
	  "history prove N --checkpoint CK [--vkey VKEY]... [--proof FILE] [--json]\n"
	  "history consistency OLD NEW [--vkey VKEY]... [--proof FILE] [--json]\n"
	  "history watch OLD [--vkey VKEY]... [--json]",
	  "past audits; --verify checks the chain; head prints its head; import takes workers' records; "
	  "checkpoints, proofs and witnesses of the history as a transparency log" },
	{ "init", cmd_init, "init",
	  "create a store" },
	{ "keygen", cmd_keygen,
	  "keygen -o PREFIX [--passphrase-file FILE] [--comment TEXT]\n"
	  "keygen --check KEY PUB [--passphrase-file FILE] [--json]",
	  "make a signing key pair (minisign format); check that two keys match" },
	{ "policy", cmd_policy, "policy set VERSION POLICY\n"
	  "policy check VERSION [POLICY]",
	  "keep the policy a version is decided under; list input columns without a reason statement" },
	{ "register", cmd_register,
	  "register PINS [--artifact FILE] [--policy P] [--replace]",
	  "train (or take an artifact), fill the pins, store the version" },
	{ "report", cmd_report,
	  "report FILE -o OUT -p PUB [-x SIGFILE] [--unverified] [--force] [--json]\n"
	  "report --store --history -o OUT [--force] [--json]",
	  "an HTML page of signed evidence, verified first: pictures, tables, print-ready" },
	{ "runs", cmd_runs,
	  "runs list [--version V] [--json]\n"
	  "runs show ID [--json] [--curve] [--plot FILE.svg] [--force]",
	  "run records kept by train, register, sweep and compare" },
	{ "sample", cmd_sample,
	  "sample add VERSION CASES.csv [--id-column C] [--score-column S [--decision-column D] [--score-precision E]] [--policy P]\n"
	  "sample show VERSION [CASE]\n"
	  "sample export VERSION OUT.csv [--force]",
	  "keep past cases with their stored scores and decisions" },
	{ "score", cmd_score,
	  "score ARTIFACT CASES.csv [--policy P | --margin] [--id-column C | --pins PINS] [--threads 1|2] [--json]",
	  "score cases with an artifact file (ours, or an XGBoost JSON model)" },
	{ "snapshot", cmd_snapshot,
	  "snapshot add FILE [--name N]\n"
	  "snapshot list\n"
	  "snapshot show DIGEST\n"
	  "snapshot export DIGEST OUT [--force]\n"
	  "snapshot synth [--rows N] [--features N] [--classes N] [--noise F] [--val-noise F] [--misalign-train] [--seed N] -o OUT [--force]",
	  "keep training data by digest" },
	{ "store", cmd_store, "store check\n"
	  "store snapshot OUT\n"
	  "store snapshot --prune KEEP DIR [--dry-run] [--json]",
	  "check every record of the store; make a read-only snapshot for workers" },
	{ "sweep", cmd_sweep,
	  "sweep PINS --seeds A-B [-j N] [--snapshot FILE] [--json] [--plot FILE.svg] [--force]",
	  "train at many seeds: the noise floor of every metric" },
	{ "train", cmd_train,
	  "train PINS [-o ARTIFACT] [--record RUN.json] [--snapshot FILE] [--no-keep] [--force]",
	  "train from pins, keep the run record, print the artifact digest" },
	{ "vary", cmd_vary,
	  "vary VERSION [--factors LIST] [-j N] [--json]",
	  "rebuild under one controlled change at a time: which factor changes the artifact" },
	{ "verify", cmd_verify,
	  "verify FILE -p PUB [-x SIGFILE] [--artifact ART] [--vkey VKEY]... [--checkpoint CK [--proof FILE]]\n"
	  "verify FILE --vkey VKEY... [-x SIGFILE] [--checkpoint CK [--proof FILE]]",
	  "check a signed evidence file" },
	{ "version", cmd_version,
	  "version list\n"
	  "version show VERSION\n"
	  "version export-artifact VERSION OUT [--force]",
	  "inspect the versions a store keeps" },
};
static const size_t ncommands = sizeof(commands) / sizeof(commands[0]);

static void
usage_all(FILE *f)
{
	fprintf(f, "usage: rebuild-audit [-S STORE] [--json] [-q] [-v] [--wait SECONDS] COMMAND [ARGS]\n"
		   "       rebuild-audit --version | --help\n\ncommands:\n");
	for (size_t i = 0; i < ncommands; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\noptions:\n"
		   "  -S STORE  the store directory (default: $REBUILD_AUDIT_STORE, then ./audit-store)\n"
		   "  --json    print one JSON document instead of the text report\n"
		   "  -q        quiet: no progress, and no report when the answer is yes\n"
		   "  -v        verbose\n"
		   "  --wait SECONDS  how long a writer waits for another's write lock\n"
		   "            (default %d; 0: not at all), saying so within a second\n"
		   "\n'rebuild-audit COMMAND -h' shows a command's usage; "
		   "man rebuild-audit(1) has the rest.\n"
		   "exit status: 0 yes, 1 the answer is no, 2 could not answer\n",
		STORE_WAIT_DEFAULT);
}

/*
 * The store waits for another writer: one line, within a second of the
 * wait (over a progress line, which it erases first).
 */
static void
wait_notice(void *ctx, const struct store_wait *w)
{
	const struct cli_ctx *c = ctx;

	if (c->progress)
		fputs("\r\033[K", stderr);
	if (w->holder > 0)
		fprintf(stderr, "rebuild-audit: waiting for the store's write lock "
				"'%s' (held by pid %ld)\n", w->path, w->holder);
	else
		fprintf(stderr, "rebuild-audit: waiting for the store's write lock "
				"'%s'\n", w->path);
}

/*
 * --wait SECONDS (also --wait=SECONDS) at argv[*i]: 1 with ctx->wait set
 * and *i past it, 0 when argv[*i] is not --wait, -1 after a usage
 * diagnostic.
 */
static int
wait_option(struct cli_ctx *ctx, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	uint64_t u;

	if (strcmp(a, "--wait") == 0)
		v = *i + 1 < argc ? argv[++*i] : "";
	else if (strncmp(a, "--wait=", 7) == 0)
		v = a + 7;
	else
		return 0;
	if (cli_parse_u64(v, CLI_WAIT_MAX, &u) != 0) {
		fprintf(stderr, "rebuild-audit: bad usage '--wait': needs a number "
				"of seconds from 0 to %d\n", CLI_WAIT_MAX);
		return -1;
	}
	ctx->wait = (double)u;
	return 1;
}

/*
 * A report cut short must not exit 0: a full disk is exit 2 with its
 * diagnostic, a closed pipe (`history --json | head`) exit 2 without a
 * word (cli_stdout_gone).
 */
static int
finish(int status)
{
	int e;

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		e = errno;
		if (cli_stdout_gone(e))
			return 2;
		fprintf(stderr, "rebuild-audit: write failed 'stdout': %s\n",
			rba_strerror(e ? e : EIO));
		return 2;
	}
	if (fclose(stdout) != 0) {
		e = errno;
		if (cli_stdout_gone(e))
			return 2;
		fprintf(stderr, "rebuild-audit: write failed 'stdout': %s\n",
			rba_strerror(e));
		return 2;
	}
	return status;
}

static void
on_sigpipe(int sig)
{
	(void)sig;
}

/*
 * A write to a pipe nobody reads fails with EPIPE, which finish() and
 * the outputs turn into exit 2, instead of killing the tool (exit 141 in
 * a shell).  A handler that does nothing, not SIG_IGN: an ignored signal
 * stays ignored across exec, while the programs the tool runs (git,
 * bwrap, a trainer's command, a variation's child) must start with the
 * default, as from a shell; exec resets a handler.  A SIGPIPE the caller
 * already ignores stays ignored, for the tool and what it runs.
 */
static void
sigpipe_catch(void)
{
	struct sigaction sa;

	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPIPE, &sa, NULL);
}

int
main(int argc, char **argv)
{
	struct cli_ctx ctx;
	const struct cli_command *cmd = NULL;
	const char *env;
	int i, wr, status;

	sigpipe_catch();
	memset(&ctx, 0, sizeof(ctx));
	ctx.prog = "rebuild-audit";
	ctx.wait = STORE_WAIT_DEFAULT;
	env = getenv("REBUILD_AUDIT_STORE");
	ctx.store_path = env != NULL && *env ? env : "./audit-store";
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-S") == 0 || strcmp(a, "--store") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "rebuild-audit: bad usage '%s': needs a directory\n", a);
				return 2;
			}
			ctx.store_path = argv[++i];
		} else if (strncmp(a, "--store=", 8) == 0) {
			ctx.store_path = a + 8;
		} else if (strncmp(a, "-S", 2) == 0) {
			ctx.store_path = a + 2;
		} else if (strcmp(a, "--json") == 0) {
			ctx.json = 1;
		} else if ((wr = wait_option(&ctx, argc, argv, &i)) != 0) {
			if (wr < 0)
				return 2;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			ctx.quiet = 1;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			ctx.verbose = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage_all(stdout);
			return finish(0);
		} else if (strcmp(a, "--version") == 0) {
			if (rba_crypto_init() != 0)
				return cli_fail("cannot start", "libsodium", RBA_E_CRYPTO, NULL);
			return finish(version_print(ctx.json));
		} else if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else {
			cli_diag("bad usage '%s': unknown option", a);
			usage_all(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage_all(stderr);
		return 2;
	}
	for (size_t k = 0; k < ncommands; k++)
		if (strcmp(argv[i], commands[k].name) == 0)
			cmd = &commands[k];
	if (cmd == NULL) {
		cli_diag("unknown command '%s': see 'rebuild-audit --help'", argv[i]);
		return 2;
	}
	ctx.cmd = cmd;
	/* -q, -v, --json and --wait may also follow the command ("audit
	 * --all -q", as a crontab line reads): take them out before the
	 * handler parses its own options.  "--" ends the scan. */
	{
		int w = i + 1;
		for (int r = i + 1; r < argc; r++) {
			const char *a = argv[r];
			if (strcmp(a, "--") == 0) {
				while (r < argc)
					argv[w++] = argv[r++];
				break;
			}
			if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
				ctx.quiet = 1;
			else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)
				ctx.verbose = 1;
			else if (strcmp(a, "--json") == 0)
				ctx.json = 1;
			else if ((wr = wait_option(&ctx, argc, argv, &r)) < 0)
				return 2;
			else if (wr == 0)
				argv[w++] = argv[r];
		}
		argc = w;
	}
	ctx.progress = !ctx.quiet && isatty(STDERR_FILENO);
	store_wait_set(ctx.wait, wait_notice, &ctx);
	if (rba_crypto_init() != 0)
		return cli_fail("cannot start", "libsodium", RBA_E_CRYPTO, NULL);
	if (cli_wants_help(&ctx, argc - i, argv + i))
		return finish(0);
	status = cmd->fn(&ctx, argc - i, argv + i);
	store_close(ctx.store);
	return finish(status);
}
