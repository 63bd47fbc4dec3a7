/* cli_version.c - rebuild-audit --version. */
#include <gnu/libc-version.h>
#include <stdio.h>

#include "cli/commands.h"
#include "common/digest.h"
#include "policy/policy.h"
#include "rebuild/kernel.h"
#include "rebuild/trainer.h"
#include "store/store.h"

#ifndef RBA_GIT_REV
#define RBA_GIT_REV "unknown"
#endif

void
cli_version_print(FILE *f, int json)
{
	const char *names[] = { "libsodium", "lmdb", "zstd", "libyaml",
				"openblas", "openblas.core", "libc", "sha256" };
	const char *vals[] = { rba_sodium_version(), store_lmdb_version(),
			       store_zstd_version(), policy_yaml_version(),
			       kernel_blas_config(), kernel_blas_corename(),
			       gnu_get_libc_version(), rba_sha256_engine() };
	size_t n = sizeof(names) / sizeof(names[0]);

	if (json) {
		fprintf(f, "{\"tool\": \"%s\", \"version\": \"%s\", \"revision\": ",
			RBA_TOOL_NAME, RBA_TOOL_VERSION);
		cli_json_str(f, RBA_GIT_REV);
		fprintf(f, ", \"trainer_abi\": %u, \"libraries\": {",
			(unsigned)rebuild_abi_current());
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s\"%s\": ", i ? ", " : "", names[i]);
			cli_json_str(f, vals[i]);
		}
		fputs("}}\n", f);
		return;
	}
	fprintf(f, "%s %s (revision %s)\n", RBA_TOOL_NAME, RBA_TOOL_VERSION,
		RBA_GIT_REV);
	fprintf(f, "trainer ABI %u (%s)\n", (unsigned)rebuild_abi_current(),
		rebuild_abi_describe(rebuild_abi_current()));
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%-14s %s\n", names[i], vals[i]);
}
