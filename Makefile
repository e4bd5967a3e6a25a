# The README's two commands. Both install what is missing on Debian 12 (we run as root),
# configure and build with CMake (Release, reusing build/), then run npacd or the tests.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
PACKAGES := cmake make g++ pkg-config libboost-dev libssl-dev libsqlite3-dev libspdlog-dev \
            catch2 tshark libbenchmark-dev nlohmann-json3-dev libcli11-dev sqlite3 iproute2
NPACD_ARGS ?= --db var/npacd.db

.PHONY: run test deps build clean tsan

deps:
	@missing=$$(for p in $(PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing packages: $$missing"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p var
	@if [ -x $(BUILD)/bin/npacd ]; then exec $(BUILD)/bin/npacd $(NPACD_ARGS); \
	 else echo "npacd is not built yet (see issue: npacd server)"; exit 1; fi

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Integration tests under ThreadSanitizer (separate build tree).
tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPAC_TSAN=ON -DNPAC_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) build-tsan
