# The two set-up commands: `make run` and `make test`. Both install what is missing first.
JOBS    ?= $(shell nproc)
WERROR  := $(if $(CI),ON,OFF)
RELEASE := build/release
TESTDIR := build/test
ARGS    ?=

.PHONY: all deps deps-build release run test bench fuzz format clean

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

# Builds everything with tests and runs every suite through ctest.
test: deps
	@cmake -S . -B $(TESTDIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOOKRELAY_WERROR=$(WERROR) \
	  -DHOOKRELAY_BUILD_TESTS=ON -DHOOKRELAY_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(TESTDIR) -j $(JOBS)
	cd $(TESTDIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

# Figures, not tests: see bench/README.md. Results land in bench/results/.
# BENCH_REPEAT runs of each measured suite (median and min-max); BENCH_REPEAT=1 for a quick look.
BENCH_REPEAT ?= 3
bench: release
	BENCH_REPEAT=$(BENCH_REPEAT) bench/run $(RELEASE)

# libFuzzer targets (clang); FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 30
fuzz: deps
	@cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DHOOKRELAY_FUZZ=ON -DHOOKRELAY_BUILD_TESTS=OFF -DHOOKRELAY_BUILD_BENCH=OFF >/dev/null
	@cmake --build build/fuzz -j $(JOBS) --target fuzzers
	fuzz/run build/fuzz $(FUZZ_SECONDS)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build
