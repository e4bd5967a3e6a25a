# The README's two commands. Both install what is missing on Debian 12 (we run as root),
# configure and build with CMake (Release, reusing build/), then run npacd or the tests.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
# A test still running after this many seconds fails as a timeout (none needs a tenth of
# it): one that hangs fails the run instead of holding it until CI gives up.
TEST_TIMEOUT ?= 300
# What npacd needs to build and run (make run), and what only the tests, benchmarks and
# the Debian package need on top (make build / make test): a PostgreSQL server for the
# PostgreSQL cases, chromium and node for the console's browser tests, tshark for the
# wire conformance, promtool (prometheus) for the metrics format, Catch2, Google Benchmark.
# mold links (CMakeLists.txt, NPAC_LINKER): most of a rebuild after an edit is linking.
RUN_PACKAGES := cmake make g++ pkg-config libboost-dev libssl-dev libsqlite3-dev libspdlog-dev \
                nlohmann-json3-dev libcli11-dev libsystemd-dev libpq-dev libjemalloc-dev help2man dpkg-dev mold
TEST_PACKAGES := catch2 tshark libbenchmark-dev sqlite3 iproute2 prometheus chromium nodejs \
                 postgresql-15
PACKAGES := $(RUN_PACKAGES) $(TEST_PACKAGES)
NPACD_ARGS ?= --db var/npacd.db
# What `make run` builds: the server and the programs the README walkthrough uses. The
# tests, benchmarks, npac-pdu and npac-tunables-doc are built by `make build`/`make test`.
RUN_TARGETS := npacd npacctl npac-soa-sim

.PHONY: run test bench deps deps-run configure configure-run build clean tsan

# Installs what is missing of $(1) (a package list).
define install_missing
	@missing=$$(for p in $(1); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing packages: $$missing"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi
endef

deps-run:
	$(call install_missing,$(RUN_PACKAGES))

deps: deps-run
	$(call install_missing,$(TEST_PACKAGES))
# The console's browser test runs npm (tests/console). Debian's nodejs comes without it;
# a nodejs that bundles npm provides it already (and conflicts with Debian's npm).
	@command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm

# The tests are configured only where their packages are installed (make build/test);
# make run configures without them, and a later make test turns them on.
configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DNPAC_TESTS=ON $(QUIET_CONFIGURE)

configure-run: deps-run
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release \
	  $$(grep -q '^NPAC_TESTS:BOOL=ON' $(BUILD)/CMakeCache.txt 2>/dev/null || echo -DNPAC_TESTS=OFF) $(QUIET_CONFIGURE)

# Quiet: cmake's configure report only when something is wrong, and no make directory lines.
QUIET_CONFIGURE := --log-level=WARNING
BUILD_FLAGS := -- --no-print-directory

build: configure
	cmake --build $(BUILD) -j $(JOBS) $(BUILD_FLAGS)

run: configure-run
	@cmake --build $(BUILD) --target $(RUN_TARGETS) -j $(JOBS) $(BUILD_FLAGS)
	@mkdir -p var
	exec $(BUILD)/bin/npacd $(NPACD_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS)

# The benchmark programs and load tools of bench/ (bench/CMakeLists.txt): not built by
# make build or make test, which never run them.
bench: configure
	cmake --build $(BUILD) --target bench -j $(JOBS) $(BUILD_FLAGS)

# Integration tests under ThreadSanitizer (separate build tree).
tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPAC_TSAN=ON -DNPAC_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS)

clean:
	rm -rf $(BUILD) build-tsan
