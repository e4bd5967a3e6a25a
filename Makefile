# The README's two commands. Both install what is missing on Debian 12 (we run as root),
# configure and build with CMake (Release, reusing build/), then run npacd or the tests.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
PACKAGES := cmake make g++ pkg-config libboost-dev libssl-dev libsqlite3-dev libspdlog-dev \
            catch2 tshark libbenchmark-dev nlohmann-json3-dev libcli11-dev sqlite3 iproute2 \
            libsystemd-dev help2man dpkg-dev prometheus chromium nodejs \
            postgresql-15 libpq-dev
NPACD_ARGS ?= --db var/npacd.db
# What `make run` builds: the server and the programs the README walkthrough uses. The
# tests, benchmarks, npac-pdu and npac-tunables-doc are built by `make build`/`make test`.
RUN_TARGETS := npacd npacctl npac-soa-sim

.PHONY: run test deps configure build clean tsan

deps:
	@missing=$$(for p in $(PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing packages: $$missing"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi
# The console's browser test runs npm (tests/console). Debian's nodejs comes without it;
# a nodejs that bundles npm provides it already (and conflicts with Debian's npm).
	@command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: configure
	cmake --build $(BUILD) --target $(RUN_TARGETS) -j $(JOBS)
	@mkdir -p var
	exec $(BUILD)/bin/npacd $(NPACD_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Integration tests under ThreadSanitizer (separate build tree).
tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPAC_TSAN=ON -DNPAC_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) build-tsan
