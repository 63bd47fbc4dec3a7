# rebuild-audit - one flat Makefile.  `make help` lists the targets.
#
# Settings (override on the command line: make CC=clang OPT=-O0):
CC       ?= cc
OPT      ?= -O2 -g
BUILD    ?= build
PREFIX   ?= /usr/local
WERROR   ?=
EXTRA_CFLAGS ?=
EXTRA_LDFLAGS ?=
# The release build is hardened (make check-hardening checks the binary):
# fortified libc calls (with optimization only), stack protector, PIE,
# full RELRO.  HARDEN=0 turns it off; the sanitizer builds do.
HARDEN   ?= 1

PKG_LIBS  = libsodium lmdb libzstd yaml-0.1 openblas
PKG_TEST  = check
# The Debian packages each target uses, installed by the target that
# needs them (as root; otherwise the command is printed): deps (make,
# make install) the compiler, git and the libraries; demo-deps what
# make demo runs besides the tool; test-deps what make check's tests
# run; bench-deps and valgrind-deps theirs.  Each list is complete for
# its target beyond BUILD_PKGS.
BUILD_PKGS = gcc libc6-dev pkg-config git libsodium-dev liblmdb-dev libzstd-dev libyaml-dev \
             libopenblas-dev bubblewrap man-db
DEMO_PKGS  = minisign jq
TEST_PKGS  = check locales lmdb-utils minisign mandoc jq clang libclang-rt-dev python3-jsonschema \
             python3-xgboost python3-sklearn bsdextrautils chromium poppler-utils faketime librsvg2-bin
BENCH_PKGS = time jq python3-xgboost python3-sklearn python3-pandas bsdextrautils
VALGRIND_PKGS = valgrind $(TEST_PKGS)
# A decimal-comma locale: the unit tests parse numbers under it (make
# test-locale, run by unit; nothing else needs it).
TEST_LOCALE = de_DE.UTF-8

# Strict-mode arithmetic depends on these: no FMA contraction, no
# fast-math, IEEE semantics.  Do not add -ffast-math or -Ofast here.
# -fexcess-precision=standard (gcc) is passed only to a compiler that
# takes it: clang 14, Debian 12's, ignores it with a warning that -Werror
# makes an error.  Tested once a run, when first needed (after deps).
FPFLAGS  = -ffp-contract=off -fno-fast-math $(FP_EXCESS)
FP_EXCESS = $(eval FP_EXCESS := $(shell echo 'int x;' | \
            $(CC) -Werror -fexcess-precision=standard -x c -c -o /dev/null - >/dev/null 2>&1 && \
            echo -fexcess-precision=standard))$(FP_EXCESS)
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wvla -Wno-unused-parameter
# Lazily expanded: pkg-config runs only after `deps` has had its chance.
# PKG_CONFIG names another (check-arm64 points it at the arm64 libraries).
PKG_CONFIG ?= pkg-config
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKG_LIBS) 2>/dev/null)
# OpenBLAS is not linked: train/kernel_fast.c loads it when fast mode
# needs it (its threads start as it loads).
PKG_LDLIBS = $(shell $(PKG_CONFIG) --libs $(filter-out openblas,$(PKG_LIBS)) 2>/dev/null) -ldl
CHK_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKG_TEST) 2>/dev/null)
CHK_LDLIBS = $(shell $(PKG_CONFIG) --libs $(PKG_TEST) 2>/dev/null)
# The revision, worked out once when first needed (after deps has
# installed git): unknown outside a git work tree (a tarball), -dirty
# after it when a tracked file differs from HEAD.
GIT_REV   = $(eval GIT_REV := $(shell [ -e .git ] && r=$$(git rev-parse --short=12 HEAD 2>/dev/null) && \
            { git diff --quiet HEAD -- 2>/dev/null || r=$$r-dirty; echo $$r; } || echo unknown))$(GIT_REV)
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) $(FPFLAGS) \
             $(WARN) $(WERROR) $(HARDEN_CFLAGS) -I. $(PKG_CFLAGS) \
             -DRBA_GIT_REV='"$(GIT_REV)"' -DRBA_CC_ID='"$(CC_ID)"' \
             -DRBA_BUILD_FLAGS='"$(strip $(OPT) $(FPFLAGS) $(EXTRA_CFLAGS))"' \
             $(EXTRA_CFLAGS) $(CFLAGS)
# The compiler, as it is (cc may be gcc or clang): the first line of
# --version, and the program's resolved path and target for .settings.
CC_ID     = $(eval CC_ID := $(subst ',,$(shell $(CC) --version 2>/dev/null | head -n 1)))$(CC_ID)
CC_WHAT   = $(eval CC_WHAT := $(subst ',,$(shell p=$$(command -v $(firstword $(CC))) && readlink -f "$$p"; \
            $(CC) -dumpmachine 2>/dev/null)))$(CC_WHAT)
ifeq ($(HARDEN),1)
HARDEN_CFLAGS  = $(if $(filter -O0,$(OPT)),,-D_FORTIFY_SOURCE=2) -fstack-protector-strong -fPIE
HARDEN_LDFLAGS = -pie -Wl,-z,relro,-z,now
endif
LDLIBS_ALL = $(PKG_LDLIBS) -lpthread -lm $(HARDEN_LDFLAGS) $(EXTRA_LDFLAGS) $(LDFLAGS)

ifeq ($(V),1)
Q =
else
Q = @
endif

# Sorted source lists, one folder per concern, bottom of the ladder first
# (doc/design.md, The ladder; HACKING has the map).
MODULES     = common store policy train data model exec rebuild sample forensics audit evidence fleet report
CLI_SRC     = $(sort $(filter-out cli/main.c,$(wildcard cli/*.c)))
# exec/sandbox_init.c is a program of its own, run inside the sandbox:
# built apart (SANDBOX_INIT) and carried in the library as bytes
# (exec/sandbox_blob.S).
SANDBOX_INIT = $(BUILD)/sandbox-init
# store/store_debug.c (raw access to damage records) is linked into the
# unit runner only; tests/helper/seams.c fills the test seams of
# common/seam.h in build/rebuild-audit-test only.  The release binary has
# neither (tests/check-deps.sh checks its symbols).
LIB_SRC     = $(filter-out exec/sandbox_init.c store/store_debug.c,$(foreach m,$(MODULES),$(sort $(wildcard $(m)/*.c)))) $(CLI_SRC)
LIB_OBJ     = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/exec/sandbox_blob.o
UNIT_SRC    = $(sort $(wildcard tests/unit/*.c))
UNIT_OBJ    = $(UNIT_SRC:%.c=$(BUILD)/%.o)
BIN         = $(BUILD)/rebuild-audit
TEST_BIN    = $(BUILD)/rebuild-audit-test

.PHONY: FORCE all deps demo-deps test-deps bench-deps valgrind-deps uninstall check unit check-reasons cli-tests check-deps check-determinism check-arm64 arm64-deps check-flips check-man \
        check-fleet fleet-deps check-fresh check-exec-attacks test-locale asan bench demo install clean help fuzz fuzz-build fuzz-bins fuzz-replay \
        check-crash check-faults check-faults-quick check-concurrency check-hardening valgrind check-external tsan \
        check-interop check-functions check-commits check-quick check-bench-tools
.DEFAULT_GOAL := all

all: $(BIN) rebuild-audit

help:
	@echo 'make              build ./rebuild-audit (installs missing Debian packages first)'
	@echo 'make demo         the whole story on the bundled German credit example'
	@echo 'make check        build with -Werror and run every test (unit, CLI, man, deps, determinism)'
	@echo 'make check-quick  unit suites and a dozen short CLI scripts (about a minute): the edit-compile-test loop'
	@echo 'make unit         Check unit tests only'
	@echo 'make check-reasons  reasons of every model kind on every case of the German sample (MLP: ~10 min; not part of check)'
	@echo 'make cli-tests    CLI tests only (CLI_TESTS='"'"'t-exec t-keys'"'"': those)'
	@echo 'make check-functions  no function over 200 lines, at most 20 over 100 (tests/check-functions.sh -v lists them)'
	@echo 'make check-commits  commit subjects of at most 72 characters since the rule began'
	@echo 'make check-bench-tools  the benchmark tools (bench_score, bench_csv, bench_tlog, bench_run, bench_xgb) run once on small inputs (part of check)'
	@echo 'make check-exec-attacks  hostile trainers and repositories: each refused in one line or contained'
	@echo 'make check-interop  the transparency log against Go'"'"'s sumdb/note and sumdb/tlog (installs golang-go, golang-golang-x-mod-dev)'
	@echo 'make check-determinism  strict training under four compilers/flags and thread counts'
	@echo 'make check-arm64  the golden digests on arm64 (cross-built gcc -O0/-O2/-O3, qemu-user); a store made here audited there'
	@echo 'make check-flips  flip bits 0 and 7 of every byte of a small store: every live flip detected, no crash'
	@echo 'make check-external  exec trainers on heavy libraries: the PyTorch example across ATEN_CPU_CAPABILITY (installs python3-torch; not part of check)'
	@echo 'make check-fleet  a single-node Slurm cluster runs the installed fleet glue, its failure cases too (needs fleet-deps)'
	@echo 'make fleet-deps   install slurm-wlm and munge (as root) or print the command; not part of deps'
	@echo 'make asan         AddressSanitizer + UBSan build, whole test suite under it'
	@echo 'make tsan         ThreadSanitizer build, the CLI tests that run threads and the store suite under it (TSAN_TESTS, TSAN_SUITES; not part of check)'
	@echo 'make fuzz         libFuzzer (clang, ASan+UBSan) on every input surface, FUZZ_SECONDS each (default $(FUZZ_SECONDS))'
	@echo 'make fuzz-replay  replay fixtures/fuzz/ (seed corpora and every crash input) through the harnesses'
	@echo 'make check-crash N=1000  kill -9 commands at random moments; the store stays whole (make check: 100)'
	@echo 'make check-faults every allocation, write and sync failing in turn, plain and under ASan (make check: a slice)'
	@echo 'make check-concurrency ROUNDS=50  16 processes of mixed commands on one store (make check: 3 rounds)'
	@echo 'make check-hardening  the binary is PIE, full RELRO, stack-protected and fortified (readelf)'
	@echo 'make valgrind     CLI tests under valgrind memcheck (VALGRIND_TESTS: a representative subset)'
	@echo 'make bench        benchmarks (prints figures; not part of check)'
	@echo 'make deps         install the Debian packages the build is missing (as root) or print the command'
	@echo 'make test-locale  generate the $(TEST_LOCALE) locale of the unit tests (as root) or print the command'
	@echo 'make demo-deps test-deps bench-deps valgrind-deps  install what make demo, check, bench, valgrind use (as root) or print the command'
	@echo 'make install      install the binary, man pages, evidence schemas and the fleet glue (Slurm, Kubernetes) under $$(DESTDIR)$$(PREFIX)'
	@echo 'make uninstall    remove exactly what make install put under $$(DESTDIR)$$(PREFIX)'
	@echo 'make check-fresh  a new Debian 12 root (mmdebstrap, pivoted in): the README'"'"'s make demo and make check in it, timed (root; 13 min on 2 cores; not part of check)'
	@echo '                  FRESH_CHECK='"'"'unit CK_RUN_SUITE=exec; cli-tests CLI_TESTS=t-exec'"'"': those make command lines instead'
	@echo 'settings: CC OPT BUILD PREFIX DESTDIR V=1 (verbose) WERROR=-Werror CLI_TESTS FRESH_CHECK'

# $(call pkg_missing,PACKAGES): shell that sets $missing to the packages
# of the list dpkg does not have installed (" a b", or empty).
pkg_missing = missing=''; for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || \
	  missing="$$missing $$p"; done

# $(call pkg_install,WHO,PACKAGES[,APT_GET_OPTIONS[,SETUP]]): shell that
# installs the packages of the list dpkg does not have, as root (after
# the command SETUP, if given), or prints what to run as root and fails.
pkg_install = $(call pkg_missing,$(2)); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "$(1): installing$$missing"; \
	    { $(if $(4),$(4) && )apt-get update -qq && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(3) $$missing; } >&2 || \
	      { echo "$(1): apt-get install$$missing failed" >&2; exit 2; }; \
	  else \
	    echo "$(1): missing Debian packages; as root (su -), run:" >&2; \
	    echo "  $(if $(4),$(4) && )apt-get update && apt-get install$$missing" >&2; exit 2; \
	  fi; \
	fi

# deps: find what the build is missing; install it as root, otherwise
# say how.
deps:
	@$(call pkg_install,deps,$(BUILD_PKGS)); \
	pkg-config --exists $(PKG_LIBS) || \
	  { echo "deps: pkg-config cannot find: $$(for l in $(PKG_LIBS); do pkg-config --exists $$l || printf '%s ' $$l; done)" >&2; exit 2; }

# What make demo, make check, make bench and make valgrind use besides
# the build, each list by itself.
demo-deps: | $(BUILD)/.deps-ok
	@$(call pkg_install,demo-deps,$(DEMO_PKGS))
test-deps: | $(BUILD)/.deps-ok
	@$(call pkg_install,test-deps,$(TEST_PKGS)); \
	pkg-config --exists $(PKG_TEST) || { echo "test-deps: pkg-config cannot find: $(PKG_TEST)" >&2; exit 2; }
bench-deps: | $(BUILD)/.deps-ok
	@$(call pkg_install,bench-deps,$(BENCH_PKGS))
valgrind-deps: | $(BUILD)/.deps-ok
	@$(call pkg_install,valgrind-deps,$(VALGRIND_PKGS))

# test-locale: the $(TEST_LOCALE) locale of the unit tests, generated as
# root (uncommented in /etc/locale.gen, so a later locale-gen keeps it),
# otherwise the command to run is printed.
test-locale: test-deps
	@if ! locale -a 2>/dev/null | grep -qix '$(subst .UTF-8,.utf-\?8,$(TEST_LOCALE))'; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "test-locale: generating the $(TEST_LOCALE) locale"; \
	    { grep -q '^$(TEST_LOCALE) UTF-8' /etc/locale.gen 2>/dev/null || \
	        echo '$(TEST_LOCALE) UTF-8' >> /etc/locale.gen; } && \
	      locale-gen >/dev/null || \
	      { echo "test-locale: locale-gen $(TEST_LOCALE) failed" >&2; exit 2; }; \
	  else \
	    echo "test-locale: missing the $(TEST_LOCALE) locale (the unit tests need a decimal comma); as root (su -), run:" >&2; \
	    echo "  localedef -i $(basename $(TEST_LOCALE)) -f UTF-8 $(TEST_LOCALE)" >&2; exit 2; \
	  fi; \
	fi

# fleet-deps: what check-fleet needs beyond deps (a real Slurm).
FLEET_PKGS = slurm-wlm munge jq python3
fleet-deps:
	@$(call pkg_install,fleet-deps,$(FLEET_PKGS),--no-install-recommends)

# check-external: exec trainers on libraries too heavy for make check
# (tests/external/t-*.sh, run like the CLI tests): the PyTorch example
# metric-equivalent at 0.0005 and not reproducible at 1e-5 when
# ATEN_CPU_CAPABILITY differs.  Installs EXTERNAL_PKGS first.
EXTERNAL_PKGS = python3-torch
check-external: $(BIN)
	@$(call pkg_install,check-external,$(EXTERNAL_PKGS),--no-install-recommends)
	$(Q)RBA_BIN=$(CURDIR)/$(BIN) RBA_TESTS=$(CURDIR)/tests/external sh tests/cli/run.sh

# check-interop: the transparency log against Go's golang.org/x/mod
# sumdb/note and sumdb/tlog (tests/interop/), built offline from
# Debian's sources (no module proxy, no network).  Installs INTEROP_PKGS
# first, as its own list: make demo and deps do not need Go.
INTEROP_PKGS = golang-go golang-golang-x-mod-dev
check-interop: $(BIN)
	@$(call pkg_install,check-interop,$(INTEROP_PKGS),--no-install-recommends)
	$(Q)sh tests/interop/run.sh $(CURDIR)/$(BIN)

# Checked again when the Makefile changes (its package lists may have).
$(BUILD)/.deps-ok: $(firstword $(MAKEFILE_LIST))
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)mkdir -p $(BUILD) && touch $@

# The build settings of a tree, rewritten when they change, so that a
# change of flags (hardening, say) rebuilds the objects built before it.
BUILD_SETTINGS = $(CC) [$(CC_WHAT)] [$(CC_ID)] $(OPT) $(FPFLAGS) $(HARDEN_CFLAGS) $(HARDEN_LDFLAGS) $(EXTRA_CFLAGS) $(EXTRA_LDFLAGS)
$(BUILD)/.settings: FORCE | $(BUILD)/.deps-ok
	@echo '$(BUILD_SETTINGS)' | cmp -s - $@ || echo '$(BUILD_SETTINGS)' > $@
FORCE:

$(BUILD)/%.o: %.c $(BUILD)/.settings | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/unit/%.o: tests/unit/%.c $(BUILD)/.settings | $(BUILD)/.deps-ok test-deps
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(CHK_CFLAGS) -MMD -MP -c $< -o $@

# The sandbox's first program: plain C and libc, none of the tool's
# libraries and no sanitizer (it runs under the sandbox's limits).
$(SANDBOX_INIT): exec/sandbox_init.c exec/sandbox_init.h $(BUILD)/.settings | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) -std=c11 $(OPT) $(WARN) $(WERROR) $(HARDEN_CFLAGS) -I. -o $@ $< $(HARDEN_LDFLAGS)

$(BUILD)/exec/sandbox_blob.o: exec/sandbox_blob.S $(SANDBOX_INIT)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  AS      $<"
	$(Q)$(CC) -c -DSANDBOX_INIT_BIN='"$(SANDBOX_INIT)"' -o $@ $<

# vary's compiler factor builds the tool again from this tree.
$(BUILD)/audit/vary.o: CFLAGS += -DRBA_SOURCE_DIR='"$(CURDIR)"'

$(BIN): $(LIB_OBJ) $(BUILD)/cli/main.o
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

rebuild-audit: $(BIN)
	$(Q)cp $(BIN) $@

# The test binary: the release one with the test seams filled from the
# environment (tests/helper/seams.c); the CLI tests that step into the
# library run it as $RBA_TEST.
$(TEST_BIN): $(LIB_OBJ) $(BUILD)/cli/main.o $(BUILD)/tests/helper/seams.o
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/check_runner: $(UNIT_OBJ) $(LIB_OBJ) $(BUILD)/store/store_debug.o | test-deps
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(CHK_LDLIBS) $(LDLIBS_ALL)

unit: $(BUILD)/check_runner test-locale
	$(Q)cd tests/unit && CK_DEFAULT_TIMEOUT=120 ../../$(BUILD)/check_runner

# The unit tests of the reasons (check_artifact.c, test case "reasons")
# on every case of the German credit sample: contributions plus baseline
# give each case's margin, and the margin its score, for logistic, trees
# and MLP.  make check explains the first EXPLAIN_MLP_CASES MLP cases;
# exact Shapley values take about half a second a case on one core.
check-reasons: $(BUILD)/check_runner
	$(Q)cd tests/unit && RBA_EXPLAIN_MLP_CASES=all CK_RUN_SUITE=artifact CK_RUN_CASE=reasons \
	  ../../$(BUILD)/check_runner

# CLI_TESTS='t-exec t-keys': those scripts only.
CLI_TESTS ?=
cli-tests: $(BIN) $(TEST_BIN) $(BUILD)/flips test-deps
	$(Q)RBA_BIN=$(CURDIR)/$(BIN) RBA_TEST_BIN=$(CURDIR)/$(TEST_BIN) FLIPS_BIN=$(CURDIR)/$(BUILD)/flips sh tests/cli/run.sh $(CLI_TESTS)

# The byte-flip sweep harness (tests/flips.c): plain C, no project code.
$(BUILD)/flips: tests/flips.c $(BUILD)/.settings | $(BUILD)/.deps-ok
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) $(WARN) $(WERROR) -o $@ $<

# Every offset of the sweep store, bits 0 and 7 (make check runs 2,000).
check-flips: $(BIN) $(BUILD)/flips test-deps
	$(Q)RBA_BIN=$(CURDIR)/$(BIN) FLIPS_BIN=$(CURDIR)/$(BUILD)/flips FLIPS_OFFSETS=all \
	  sh tests/cli/run.sh t-flips

# ---- kills and faults (tests/crash.sh, tests/faults.sh) ------------------
N ?= 1000
FAULTS_SLICE ?= 0
FAULTS_ASAN_SLICE ?= 0
HELPER_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) $(WARN) $(WERROR)

$(BUILD)/killafter: tests/killafter.c $(BUILD)/.settings | $(BUILD)/.deps-ok
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(HELPER_CFLAGS) -o $@ $<

check-crash: $(BIN) $(BUILD)/killafter test-deps
	$(Q)RBA=$(CURDIR)/$(BIN) KILLAFTER=$(CURDIR)/$(BUILD)/killafter sh tests/crash.sh $(N)

# The preload library (all three kinds), and for a binary under ASan the
# I/O half as a preload and the allocation half linked in with --wrap.
$(BUILD)/faults.so: tests/faults.c $(BUILD)/.settings | $(BUILD)/.deps-ok
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(HELPER_CFLAGS) -shared -fPIC -o $@ $< -ldl
$(BUILD)/faults-io.so: tests/faults.c $(BUILD)/.settings | $(BUILD)/.deps-ok
	$(Q)$(CC) $(HELPER_CFLAGS) -DFAULTS_NO_ALLOC -shared -fPIC -o $@ $< -ldl
$(BUILD)/tests/faultwrap.o: tests/faults.c $(BUILD)/.settings | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(HELPER_CFLAGS) -DFAULTS_NO_ALLOC -DFAULTS_WRAP -c -o $@ $<
$(BUILD)/rebuild-audit-faults: $(LIB_OBJ) $(BUILD)/cli/main.o $(BUILD)/tests/faultwrap.o
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc -o $@ $^ $(LDLIBS_ALL)

check-faults-quick: $(BIN) $(BUILD)/faults.so test-deps
	$(Q)RBA=$(CURDIR)/$(BIN) FAULTS_SO=$(CURDIR)/$(BUILD)/faults.so sh tests/faults.sh 4

check-faults: $(BIN) $(BUILD)/faults.so test-deps
	$(Q)RBA=$(CURDIR)/$(BIN) FAULTS_SO=$(CURDIR)/$(BUILD)/faults.so sh tests/faults.sh $(FAULTS_SLICE)
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan OPT='-O1 -g -fno-omit-frame-pointer' HARDEN=0 \
	  EXTRA_CFLAGS='-fsanitize=address,undefined -fno-sanitize-recover=all' \
	  EXTRA_LDFLAGS='-fsanitize=address,undefined' \
	  build/asan/rebuild-audit-faults build/asan/faults-io.so
	$(Q)RBA=$(CURDIR)/build/asan/rebuild-audit-faults FAULTS_SO=$(CURDIR)/build/asan/faults-io.so \
	  FAULTS_ASAN=1 sh tests/faults.sh $(FAULTS_ASAN_SLICE)

check-hardening: $(BIN)
	$(Q)sh tests/hardening.sh $(BIN)

# memcheck is 20-50 times slower, too slow for the whole CLI suite: a
# representative subset (every invalid input, keys and signatures, the
# history chain, disputes, scoring) that times no kill and generates no
# megabytes of input.  VALGRIND_TESTS='t-...' chooses others.
VALGRIND_TESTS ?= t-invalid t-history t-score t-dispute t-keys t-xgboost
valgrind: $(BIN) valgrind-deps
	$(Q)for t in $(VALGRIND_TESTS); do \
	  RBA_BIN=$(CURDIR)/tests/valgrind-rba.sh RBA_REAL_BIN=$(CURDIR)/$(BIN) RBA_SLOW=1 \
	    sh tests/cli/run.sh $$t || exit 1; done

ROUNDS ?= 50
check-concurrency: $(BIN) test-deps
	$(Q)RBA=$(CURDIR)/$(BIN) sh tests/concurrency.sh $(ROUNDS) 16

# The include ladder: a folder may include only folders to its right.
check-deps: $(BIN)
	$(Q)sh tests/check-deps.sh $(BIN)

# Function length and commit subjects (HACKING, Habits).
check-functions:
	$(Q)sh tests/check-functions.sh

check-commits:
	$(Q)sh tests/check-commits.sh

# The edit-compile-test loop: the unit suites and a dozen short CLI
# scripts (CHECK_QUICK_TESTS), about a minute; make check is what CI runs.
CHECK_QUICK_TESTS ?= t-invalid t-keys t-output t-range t-small t-lock t-messages t-records t-register t-score t-history t-diff
check-quick: $(BIN) $(TEST_BIN) $(BUILD)/check_runner test-locale
	$(Q)sh tests/check-deps.sh $(BIN)
	$(Q)cd tests/unit && CK_DEFAULT_TIMEOUT=120 ../../$(BUILD)/check_runner
	$(Q)RBA_BIN=$(CURDIR)/$(BIN) RBA_TEST_BIN=$(CURDIR)/$(TEST_BIN) sh tests/cli/run.sh $(CHECK_QUICK_TESTS)

check-man: $(BIN) test-deps
	$(Q)sh tests/check-man.sh $(BIN)

# Starts munged, slurmctld and slurmd as root in a temporary directory
# and stops them again; see tests/check-fleet.sh.
check-fleet: $(BIN) fleet-deps
	$(Q)sh tests/check-fleet.sh $(CURDIR)/$(BIN)

# The hostile trainers and repositories of tests/attacks/ (make check).
check-exec-attacks: $(BIN) test-deps
	$(Q)RBA_BIN=$(CURDIR)/$(BIN) RBA_TESTS=$(CURDIR)/tests/attacks sh tests/cli/run.sh

check-determinism: $(BIN) test-deps
	$(Q)sh tests/determinism.sh

# arm64: cross-built (gcc -O0, -O2, -O3) against Debian's arm64 libraries
# through multiarch, run under qemu-user; every golden digest, ABI 1 and
# trees; then a store made here is audited there (tests/cross-audit.sh):
# bit-identical, every case's score the same.  Not part of check
# (minutes under emulation).
ARM64_PKGS = gcc-aarch64-linux-gnu qemu-user libc6-dev:arm64 libsodium-dev:arm64 \
             liblmdb-dev:arm64 libzstd-dev:arm64 libyaml-dev:arm64 libopenblas-dev:arm64
arm64-deps: | $(BUILD)/.deps-ok
	@$(call pkg_install,arm64-deps,$(ARM64_PKGS),--no-remove,dpkg --add-architecture arm64)

check-arm64: arm64-deps test-deps $(BIN)
	$(Q)RBA_DET_BUILDS='arm64-O0 arm64-O2 arm64-O3' sh tests/determinism.sh
	$(Q)sh tests/cross-audit.sh $(CURDIR)/$(BIN) build/det-arm64-O2/run

# Builds run on every core (CHECK_BUILD_JOBS); the tests that time kills
# and races run one at a time as before.
CHECK_BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: test-deps
	$(Q)$(MAKE) --no-print-directory -j$(CHECK_BUILD_JOBS) WERROR=-Werror all $(BUILD)/check_runner $(TEST_BIN) \
	  $(BENCH_TOOLS)
	$(Q)$(MAKE) --no-print-directory WERROR=-Werror check-deps check-man check-functions check-commits unit cli-tests check-exec-attacks \
	  check-bench-tools
	$(Q)$(MAKE) --no-print-directory check-interop
	$(Q)$(MAKE) --no-print-directory check-determinism
	$(Q)$(MAKE) --no-print-directory WERROR=-Werror fuzz-replay check-crash N=100 check-faults-quick \
	  check-concurrency ROUNDS=3 check-hardening

# The benchmark tools make bench drives, each run once on a small input
# (tests/bench-tools.sh): built with the tool, they must still work.
BENCH_TOOLS = $(BUILD)/bench_score $(BUILD)/bench_csv $(BUILD)/bench_tlog $(BUILD)/bench_run \
	$(BUILD)/bench_xgb
check-bench-tools: $(BIN) $(BENCH_TOOLS)
	$(Q)sh tests/bench-tools.sh $(BUILD)

asan: test-locale
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan OPT='-O1 -g -fno-omit-frame-pointer' HARDEN=0 \
	  EXTRA_CFLAGS='-fsanitize=address,undefined -fno-sanitize-recover=all' \
	  EXTRA_LDFLAGS='-fsanitize=address,undefined' WERROR=-Werror \
	  build/asan/rebuild-audit build/asan/rebuild-audit-test build/asan/check_runner
	$(Q)cd tests/unit && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  CK_DEFAULT_TIMEOUT=600 ../../build/asan/check_runner
	$(Q)ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  RBA_BIN=$(CURDIR)/build/asan/rebuild-audit RBA_SLOW=1 RBA_SANITIZED=1 sh tests/cli/run.sh

# ThreadSanitizer: the CLI tests whose commands run threads (audit
# --threads, the hash helper, the index walk, training threads, sweeps).
# Any report fails the command, and so the test.  Then the unit suites
# whose samples are several chunks (TSAN_SUITES: the store's stream,
# its helper and the index walked in their waits), which the CLI
# tests' one-chunk samples never start.
TSAN_TESTS ?= t-audit t-integrity t-abi2 t-train t-forensics t-gate t-gbdt t-native t-records t-env
TSAN_SUITES ?= store
tsan: test-locale
	$(Q)$(MAKE) --no-print-directory BUILD=build/tsan OPT='-O1 -g -fno-omit-frame-pointer' HARDEN=0 \
	  EXTRA_CFLAGS='-fsanitize=thread' EXTRA_LDFLAGS='-fsanitize=thread' WERROR=-Werror \
	  build/tsan/rebuild-audit build/tsan/rebuild-audit-test build/tsan/flips build/tsan/check_runner
	$(Q)TSAN_OPTIONS=halt_on_error=1:exitcode=66:report_signal_unsafe=0 \
	  RBA_BIN=$(CURDIR)/build/tsan/rebuild-audit RBA_TEST_BIN=$(CURDIR)/build/tsan/rebuild-audit-test \
	  FLIPS_BIN=$(CURDIR)/build/tsan/flips RBA_SLOW=1 RBA_SANITIZED=1 sh tests/cli/run.sh $(TSAN_TESTS)
	$(Q)for s in $(TSAN_SUITES); do \
	  (cd tests/unit && TSAN_OPTIONS=halt_on_error=1:exitcode=66 CK_RUN_SUITE=$$s \
	   CK_DEFAULT_TIMEOUT=600 ../../build/tsan/check_runner) || exit 1; done

$(BUILD)/bench_score: $(BUILD)/bench/bench_score.o $(LIB_OBJ)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/bench_xgb: $(BUILD)/bench/bench_xgb.o $(LIB_OBJ)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/bench_csv: $(BUILD)/bench/bench_csv.o $(LIB_OBJ)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/bench_tlog: $(BUILD)/bench/bench_tlog.o $(LIB_OBJ)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

# bench_run (the time and peak memory of a command, to the microsecond)
# links nothing of the tool's.
$(BUILD)/bench_run: $(BUILD)/bench/bench_run.o
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^

bench: bench-deps $(BIN) $(BUILD)/bench_score $(BUILD)/bench_xgb $(BUILD)/bench_csv $(BUILD)/bench_tlog $(BUILD)/bench_run
	$(Q)RBA_BENCH_SCORE=$(CURDIR)/$(BUILD)/bench_score RBA_BENCH_XGB=$(CURDIR)/$(BUILD)/bench_xgb RBA_BENCH_CSV=$(CURDIR)/$(BUILD)/bench_csv \
	  RBA_BENCH_TLOG=$(CURDIR)/$(BUILD)/bench_tlog RBA_BENCH_RUN=$(CURDIR)/$(BUILD)/bench_run \
	  sh bench/run.sh $(CURDIR)/$(BIN)

# ---- fuzzing (tests/fuzz/, fixtures/fuzz/) --------------------------------
# One libFuzzer harness per input surface, linked with the library objects
# built again by clang under ASan+UBSan in $(FUZZ_BUILD).  make fuzz
# explores (new inputs go to $(FUZZ_BUILD)/corpus/, crashes to
# $(FUZZ_BUILD)/crashes/); fuzz-replay runs every file kept in
# fixtures/fuzz/<target>/ once (make check).
FUZZ_TARGETS = artifact chunk csv evidence expr gate note pins policy report sign store xgboost
FUZZ_SECONDS ?= 60
FUZZ_CC   ?= clang
FUZZ_BUILD = build/fuzz
FUZZ_BINS  = $(FUZZ_TARGETS:%=$(BUILD)/fuzz_%)

$(BUILD)/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(LIB_OBJ)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

.PRECIOUS: $(BUILD)/tests/fuzz/%.o
fuzz-bins: $(FUZZ_BINS)

fuzz-build: test-deps
	$(Q)$(MAKE) --no-print-directory -j$(CHECK_BUILD_JOBS) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) WERROR= HARDEN=0 \
	  OPT='-O1 -g -fno-omit-frame-pointer' FPFLAGS='-ffp-contract=off -fno-fast-math' \
	  EXTRA_CFLAGS='-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all' \
	  EXTRA_LDFLAGS='-fsanitize=address,undefined' fuzz-bins

fuzz: fuzz-build $(BIN)
	$(Q)RBA_BIN=$(CURDIR)/$(BIN) FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  sh tests/fuzz/run.sh $(FUZZ_TARGETS)

fuzz-replay: fuzz-build $(BIN)
	$(Q)RBA_BIN=$(CURDIR)/$(BIN) FUZZ_BUILD=$(FUZZ_BUILD) \
	  sh tests/fuzz/replay.sh $(FUZZ_TARGETS)


# ./rebuild-audit too: the README's Quick start runs it after make demo.
demo: $(BIN) rebuild-audit demo-deps
	$(Q)sh tests/demo.sh $(CURDIR)/$(BIN)

# The README's set-up on a new Debian 12 root (mmdebstrap --variant=apt,
# pivoted in with unshare and pivot_root, so bubblewrap works in it):
# apt-get install make, then make demo and make check in a clone of HEAD,
# timed; then make install, man rebuild-audit and make uninstall.  As
# root; not part of check (13 min on 2 cores, measured).  FRESH_CHECK: other make
# command lines instead of "demo; check", separated by ';', e.g.
# FRESH_CHECK='unit CK_RUN_SUITE=exec; cli-tests CLI_TESTS=t-exec'.
FRESH_CHECK ?= demo; check
check-fresh:
	$(Q)RBA_FRESH_CHECK='$(FRESH_CHECK)' sh tests/check-fresh.sh

# The fleet glue: the Slurm submit script in bin/ (its manual,
# rebuild-audit-fleet-submit(1), with the other pages), its .sbatch files in
# share/rebuild-audit/slurm/ and the Kubernetes manifests in
# share/rebuild-audit/kubernetes/.  The submit script finds them, and
# the rebuild-audit beside it, from its own resolved location (readlink
# -f: a symlink to it works), so the tree may be installed under DESTDIR
# and moved.  The JSON schemas of the evidence statements go to
# share/rebuild-audit/schemas/.  make uninstall removes exactly these
# files, then the directories of share/rebuild-audit and share/man's man1
# and man5 when that leaves them empty (bin/ and share/man stay).
SHARE_DIR = $(DESTDIR)$(PREFIX)/share/rebuild-audit
MAN1 = $(notdir $(wildcard man/*.1))
MAN5 = $(notdir $(wildcard man/*.5))
SLURM_FILES = $(notdir $(wildcard contrib/slurm/*.sbatch))
K8S_FILES = $(notdir $(wildcard contrib/kubernetes/*.yaml)) README
SCHEMAS = $(notdir $(wildcard fixtures/evidence/*.schema.json))
install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 \
	  $(SHARE_DIR)/slurm $(SHARE_DIR)/kubernetes $(SHARE_DIR)/schemas
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/rebuild-audit
	install -m 644 $(MAN1:%=man/%) $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(MAN5:%=man/%) $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 contrib/slurm/rebuild-audit-fleet-submit $(DESTDIR)$(PREFIX)/bin/rebuild-audit-fleet-submit
	install -m 644 $(SLURM_FILES:%=contrib/slurm/%) $(SHARE_DIR)/slurm
	install -m 644 $(K8S_FILES:%=contrib/kubernetes/%) $(SHARE_DIR)/kubernetes
	install -m 644 $(SCHEMAS:%=fixtures/evidence/%) $(SHARE_DIR)/schemas

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/rebuild-audit $(DESTDIR)$(PREFIX)/bin/rebuild-audit-fleet-submit \
	  $(MAN1:%=$(DESTDIR)$(PREFIX)/share/man/man1/%) $(MAN5:%=$(DESTDIR)$(PREFIX)/share/man/man5/%) \
	  $(SLURM_FILES:%=$(SHARE_DIR)/slurm/%) $(K8S_FILES:%=$(SHARE_DIR)/kubernetes/%) \
	  $(SCHEMAS:%=$(SHARE_DIR)/schemas/%)
	-rmdir $(SHARE_DIR)/slurm $(SHARE_DIR)/kubernetes $(SHARE_DIR)/schemas $(SHARE_DIR) \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 2>/dev/null

clean:
	rm -rf build rebuild-audit

-include $(LIB_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(BUILD)/cli/main.d $(BUILD)/store/store_debug.d $(BUILD)/tests/helper/seams.d $(BUILD)/bench/bench_score.d $(BUILD)/bench/bench_xgb.d $(BUILD)/bench/bench_csv.d $(BUILD)/bench/bench_tlog.d $(BUILD)/bench/bench_run.d $(wildcard $(BUILD)/tests/fuzz/*.d)
