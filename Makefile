# dflow: `make run` (set up, build, run the main job), `make test` (set up, build, run every
# test), `make bench` (benchmarks beside their PyTorch peers).
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build run test bench clean asan

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

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

bench:
	@scripts/install-deps.sh --bench
	@$(MAKE) --no-print-directory build
	bench/run_all.sh $(BUILD)

# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	cmake -S . -B build-asan -G Ninja -DDFLOW_SANITIZE=ON -DDFLOW_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp ctest --output-on-failure -j $(JOBS) --timeout 600

clean:
	rm -rf $(BUILD) build-asan
