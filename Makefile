# dflow: `make run` (set up, build, run the main job), `make test` (set up, build, run every
# test), `make bench` (benchmarks beside their PyTorch peers).
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build run test conformance bench clean asan fuzz

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The Iris job on a local cluster: one parameter server and two workers, each task's output
# prefixed with its name. `$(BUILD)/bin/iris` alone trains in one process.
run: build
	$(BUILD)/bin/dflow launch --ps 1 --workers 2 -- $(BUILD)/bin/iris

# After the suite, a check that no more tests skipped or were disabled than tests/skip_budget.txt
# allows (scripts/check_skips.py on ctest's JUnit report), then a short fuzzing pass: every fuzz
# target 5 s (its clang build takes about 570 s from scratch on 2 cores; see
# fuzz/run_fuzz.sh).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300 --output-junit ctest-junit.xml
	scripts/check_skips.py $(BUILD)/ctest-junit.xml tests/skip_budget.txt
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=5

# The differential suite alone: dflow beside real TensorFlow on TensorFlow's own graphs (ops and
# their gradients, whole models, file formats, SavedModel). `make test` runs it too.
conformance: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600 -R '^conformance\.'

bench:
	@scripts/install-deps.sh --bench
	@$(MAKE) --no-print-directory build
	bench/run_all.sh $(BUILD)

# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	cmake -S . -B build-asan -G Ninja -DDFLOW_SANITIZE=ON -DDFLOW_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp ctest --output-on-failure -j $(JOBS) --timeout 600

# Every fuzz target (fuzz/) built with clang's libFuzzer, ASan and UBSan in build-fuzz, each run
# FUZZ_SECONDS seconds on its seed corpus; fails on a crash and prints the reproducer.
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run_fuzz.sh

clean:
	rm -rf $(BUILD) build-asan build-fuzz
