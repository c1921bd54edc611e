# The two set-up commands: `make run` and `make test`. Both install what is missing first.
JOBS    ?= $(shell nproc)
# Every build here treats warnings as errors: g++ 12 (test, release) and clang++ 14 (sanitizers).
WERROR  := ON
RELEASE := build/release
TESTDIR := build/test
ARGS    ?=
# Optimisation and debug information of the test and sanitizer builds (RelWithDebInfo's flags).
# Line tables only (-g1, -gline-tables-only): failures, backtraces and sanitizer reports keep
# file:line, while each compile takes about a quarter less time and objects are a quarter of the
# size (docs/development.md has the figures). For full debug information in gdb:
# make test TEST_OPT="-O2 -g -DNDEBUG".
TEST_OPT ?= -O2 -g1 -DNDEBUG
SAN_OPT  ?= -O1 -gline-tables-only -DNDEBUG

.PHONY: all deps deps-build release run test test-sanitize check-threads bench soak fuzz fuzz-ci format format-check clean deb package-test

all: release

deps:
	@scripts/install-deps

# Building and running need no browser, Node.js or npm (those are for the e2e test).
deps-build:
	@scripts/install-deps --no-e2e

release: deps-build
	@cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=Release -DHOOKRELAY_WERROR=$(WERROR) \
	  -DHOOKRELAY_BUILD_TESTS=OFF -DHOOKRELAY_BUILD_BENCH=ON >/dev/null
	@cmake --build $(RELEASE) -j $(JOBS)

# Builds Release and starts the server on the embedded store (./hookrelay-data).
run: release
	$(RELEASE)/hookrelay serve $(ARGS)

# The Debian package: $(DEBDIR)/hookrelay_<version>_amd64.deb (the binary, the hardened
# hookrelay.service, /etc/hookrelay/hookrelay.toml as a conffile, hookrelay(1), and maintainer
# scripts that make the hookrelay user and /var/lib/hookrelay). CPack's DEB generator packages a
# build tree as it is: the release build by default. dpkg-buildpackage (debhelper) would
# configure and compile the whole project again in a tree of its own, a second full build on CI's
# 2 cores (docs/operations.md, "Install from the .deb"). HOOKRELAY_DEB_VERSION=... sets another
# version; DEB_BUILD=<tree> packages another configured tree (the package test's, below).
DEBDIR    := build/deb
DEB_BUILD ?= $(RELEASE)
deb: deps-build
	@if [ "$(DEB_BUILD)" = "$(RELEASE)" ]; then $(MAKE) --no-print-directory release; fi
	@cmake --build $(DEB_BUILD) -j $(JOBS) --target hookrelay hookrelay_man
	@rm -f $(DEBDIR)/hookrelay_*.deb
	@mkdir -p $(DEBDIR)
	@cd $(DEB_BUILD) && cpack -G DEB -B $(CURDIR)/$(DEBDIR) >$(CURDIR)/$(DEBDIR)/cpack.log 2>&1 || \
	  { cat $(CURDIR)/$(DEBDIR)/cpack.log; exit 1; }
	@ls -1 $(DEBDIR)/hookrelay_*.deb

# As root, on this machine: builds the .deb, installs, upgrades, removes and purges it, and runs the
# installed server as the package's user through one delivery (tests/package/run). It packages
# the tree `make test` built when there is one (CI runs it right after make test, so nothing is
# compiled twice: the same sources at -O2 instead of -O3), else the release build.
PACKAGE_TEST_BUILD = $(if $(wildcard $(TESTDIR)/CMakeCache.txt),$(TESTDIR),$(RELEASE))
package-test: deps-build
	DEB_BUILD=$(PACKAGE_TEST_BUILD) tests/package/run

# Builds everything with tests and runs every suite through ctest; ends with the ten slowest.
test: deps
	@cmake -S . -B $(TESTDIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOOKRELAY_WERROR=$(WERROR) \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(TEST_OPT)" \
	  -DHOOKRELAY_BUILD_TESTS=ON -DHOOKRELAY_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(TESTDIR) -j $(JOBS)
	cd $(TESTDIR) && ctest --output-on-failure -j $(JOBS) --timeout 600; rc=$$?; \
	  cd $(CURDIR) && scripts/slowest-tests $(TESTDIR) 10; exit $$rc

# The test suites again under the sanitizers (clang++ 14), each build in its own folder:
# 1. build/asan: everything under AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer
#    included), and every ctest suite runs there but the browser-driven e2e ones (label `e2e`):
#    e2e_dashboard runs alone (RUN_SERIAL) for two minutes under ASan, and what it does to the
#    binary (the API calls, the dashboard's files) the API and integration suites do under ASan
#    too; `make test` runs it. The fuzzers are built in the same folder (make fuzz, make
#    fuzz-ci), so the instrumented libraries are compiled once for both.
# 2. build/tsan: only the suites labelled `tsan` in tests/CMakeLists.txt (store, delivery engine,
#    HTTP server, replay, alerts) under ThreadSanitizer; building only those keeps CI's time down.
# Any report fails its test: UBSan aborts (-fno-sanitize-recover=all), ASan/TSan halt_on_error.
# Suppressions live only in sanitizers/*.supp, each with the reason.
SAN_CXX   ?= clang++-14
SAN_FLAGS  = -DCMAKE_CXX_COMPILER=$(SAN_CXX) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
             -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SAN_OPT)" \
             -DHOOKRELAY_WERROR=$(WERROR) -DHOOKRELAY_BUILD_TESTS=ON -DHOOKRELAY_BUILD_BENCH=OFF
ASAN_CONFIGURE = cmake -S . -B build/asan $(SAN_FLAGS) -DHOOKRELAY_SANITIZE=address,undefined \
                 -DHOOKRELAY_FUZZ=ON >/dev/null
SAN_SYM   ?= /usr/bin/llvm-symbolizer-14
ASAN_ENV   = ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:external_symbolizer_path=$(SAN_SYM) \
             LSAN_OPTIONS=suppressions=$(CURDIR)/sanitizers/lsan.supp:print_suppressions=0 \
             UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:external_symbolizer_path=$(SAN_SYM)
TSAN_ENV   = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:external_symbolizer_path=$(SAN_SYM):suppressions=$(CURDIR)/sanitizers/tsan.supp
test-sanitize: deps
	@$(ASAN_CONFIGURE)
	@cmake --build build/asan -j $(JOBS)
	cd build/asan && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -LE e2e
	@cmake -S . -B build/tsan $(SAN_FLAGS) -DHOOKRELAY_SANITIZE=thread >/dev/null
	@cmake --build build/tsan -j $(JOBS) --target tsan_tests
	cd build/tsan && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -L tsan

# Clang's thread-safety analysis on its own (docs/thread_safety.md), quicker than test-sanitize:
# every library under src/ built with clang++ 14 -Wthread-safety -Werror (no sanitizer, no
# tests), then the thread_safety_* cases showing that a lock mistake fails the build. Both
# sanitizer builds apply the same analysis to everything, tests included.
check-threads: deps-build
	@cmake -S . -B build/threads $(SAN_FLAGS) >/dev/null
	@cmake --build build/threads -j $(JOBS) --target hookrelay_libraries
	cd build/threads && ctest --output-on-failure -R '^thread_safety_'

# Figures, not tests: see bench/README.md. Results land in bench/results/.
# BENCH_REPEAT runs of each measured suite (median and min-max); BENCH_REPEAT=1 for a quick look.
BENCH_REPEAT ?= 3
bench: release
	BENCH_REPEAT=$(BENCH_REPEAT) bench/run $(RELEASE)

# Leak watch, not part of `make test`: SOAK_SECONDS (600) of mixed load against a flaky sink,
# sampled every 10 s; fails unless RSS, fds, p99 and backlog stay flat (README, "Soak").
SOAK_SECONDS ?= 600
soak: release
	SOAK_SECONDS=$(SOAK_SECONDS) bench/soak.py $(RELEASE)/hookrelay

# libFuzzer targets (clang++ 14, in the ASan build folder: the libraries get coverage
# instrumentation on top of ASan and UBSan); FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 30
fuzz: deps
	@$(ASAN_CONFIGURE)
	@cmake --build build/asan -j $(JOBS) --target fuzzers
	fuzz/run build/asan $(FUZZ_SECONDS)

# CI's short run of every fuzzer (FUZZ_CI_SECONDS each, from the seed corpora): a crash found
# since the last change fails the build. Same build as `make fuzz`.
FUZZ_CI_SECONDS ?= 5
fuzz-ci: deps
	@$(ASAN_CONFIGURE)
	@cmake --build build/asan -j $(JOBS) --target fuzzers
	fuzz/run build/asan $(FUZZ_CI_SECONDS)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

# Fails on any formatting drift (CI runs it first): `make format` fixes it.
format-check: deps-build
	clang-format --dry-run -Werror $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build
