# Pomodoro: `make run` starts the server on :8080, `make test` runs every test.
# Both install what is missing first (Debian packages through apt-get), so a fresh machine needs nothing by hand.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
APT_PACKAGES := libcurl4-openssl-dev libwebsockets-dev libuv1-dev libjson-c-dev libssl-dev libsqlite3-dev libpq-dev postgresql redis-server redis-sentinel libhiredis-dev pkg-config tmux curl nginx
PORT ?= 8080
HOST ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build release run run-cluster test test-unit test-browser test-api clean fuzz test-sanitize

# Installs the Debian packages that are not installed yet (apt-get update runs once, only when needed).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product pomodoro-server

run: release
	$$($(SWIFT) build -c release --show-bin-path)/pomodoro-server --port $(PORT) --web-root web $(if $(HOST),--host $(HOST))

# Redis, PostgreSQL, three cluster nodes and nginx on loopback, the page at http://127.0.0.1:8080/
# (docs/CLUSTER.md); Ctrl-C stops all of it.
run-cluster: release
	bash deploy/run-cluster.sh "$$($(SWIFT) build -c release --show-bin-path)/pomodoro-server" web

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) --no-print-directory bench-smoke
	bash Tests/browser/run.sh "$$($(SWIFT) build --show-bin-path)/pomodoro-server"
	bash Tests/events/run.sh "$$($(SWIFT) build --show-bin-path)/pomodoro-server" "$$($(SWIFT) build --show-bin-path)/pomo"
	bash Tests/calendar/run.sh
	bash Tests/api/run.sh "$$($(SWIFT) build --show-bin-path)/pomodoro-server"
	$(MAKE) fuzz FUZZ_SECONDS=30
	$(MAKE) --no-print-directory test-deploy

# The HTTP API against web/openapi.json: the document validated (openapi-spec-validator), the real server's
# answers checked against its schemas (jsonschema); both from PyPI when missing.
test-api: build
	bash Tests/api/run.sh "$$($(SWIFT) build --show-bin-path)/pomodoro-server"

# The web page in headless Chromium against the real server (Tests/browser/README.md).
test-browser: build
	bash Tests/browser/run.sh "$$($(SWIFT) build --show-bin-path)/pomodoro-server"

clean:
	rm -rf .build

# libFuzzer under AddressSanitizer (Tests/Fuzz), FUZZ_SECONDS each: over the client-frame decoder, then
# over the bus between cluster nodes and the relay's frames (BusFuzzer). Longer runs:
# `make fuzz FUZZ_SECONDS=3600`. Inputs that crash are written to Tests/Fuzz/.build/crashes/.
FUZZ_SECONDS ?= 60
fuzz: deps
	cd Tests/Fuzz && $(SWIFT) build -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product DecoderFuzzer
	cd Tests/Fuzz && $(SWIFT) build -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product BusFuzzer
	mkdir -p Tests/Fuzz/.build/corpus Tests/Fuzz/.build/bus-corpus Tests/Fuzz/.build/crashes
	cp Tests/Fuzz/corpus/* Tests/Fuzz/.build/corpus/
	cp Tests/Fuzz/corpus/* Tests/Fuzz/bus-corpus/* Tests/Fuzz/.build/bus-corpus/
	Tests/Fuzz/.build/debug/DecoderFuzzer Tests/Fuzz/.build/corpus -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  -artifact_prefix=Tests/Fuzz/.build/crashes/ -print_final_stats=1 > Tests/Fuzz/.build/decoder.log 2>&1; \
	  status=$$?; tail -n 12 Tests/Fuzz/.build/decoder.log; exit $$status
	Tests/Fuzz/.build/debug/BusFuzzer Tests/Fuzz/.build/bus-corpus -max_total_time=$(FUZZ_SECONDS) -max_len=20000 \
	  -artifact_prefix=Tests/Fuzz/.build/crashes/bus- -print_final_stats=1 > Tests/Fuzz/.build/bus.log 2>&1; \
	  status=$$?; tail -n 12 Tests/Fuzz/.build/bus.log; exit $$status

# The whole Swift test suite once under AddressSanitizer and once under ThreadSanitizer, each in a build
# folder of its own. Any report fails the run. Leak reports are off: XCTest's harness and objects that
# live as long as the process (OpenSSL's global state, the server a test process keeps) would drown them;
# the hostile-client suite checks instead that no connection or room outlives its client. Every bound a live
# test waits for is stretched (TEST_TIME_SCALE, Tests/PomodoroTestSupport/TestTime.swift): a
# sanitizer makes each instruction several times dearer, ThreadSanitizer more than AddressSanitizer.
test-sanitize: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	ASAN_OPTIONS=detect_leaks=0 TEST_TIME_SCALE=3 $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS=halt_on_error=1 TEST_TIME_SCALE=6 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

# `make install` (usually `sudo make install`): the release build with the Swift runtime linked in, the web
# page and the systemd unit, under $(DESTDIR)$(PREFIX). deploy/README.md has the rest.
PREFIX ?= /usr/local
DESTDIR ?=
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
RELEASE_FLAGS := -c release --static-swift-stdlib
# What is installed and shipped: the executables only. Building every target would also build the tests'
# support module, which needs the Testing library that a release build with the static stdlib does not have.
RELEASE_PRODUCTS := $(SWIFT) build $(RELEASE_FLAGS) --product pomodoro-server && $(SWIFT) build $(RELEASE_FLAGS) --product pomo
.PHONY: install test-deploy

install: deps
	$(RELEASE_PRODUCTS)
	@bin="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"; set -e; \
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/pomodoro" \
	  "$(DESTDIR)$(PREFIX)/share/doc/pomodoro" "$(DESTDIR)$(SYSTEMD_UNIT_DIR)"; \
	install -m 755 "$$bin/pomodoro-server" "$(DESTDIR)$(PREFIX)/bin/pomodoro-server"; \
	if [ -x "$$bin/pomo" ]; then install -m 755 "$$bin/pomo" "$(DESTDIR)$(PREFIX)/bin/pomo"; fi; \
	rm -rf "$(DESTDIR)$(PREFIX)/share/pomodoro/web"; \
	cp -R web "$(DESTDIR)$(PREFIX)/share/pomodoro/web"; \
	chmod -R u=rwX,go=rX "$(DESTDIR)$(PREFIX)/share/pomodoro/web"; \
	install -m 644 deploy/README.md "$(DESTDIR)$(PREFIX)/share/doc/pomodoro/deploy.md"; \
	sed 's|/usr/local/|$(PREFIX)/|g' deploy/pomodoro.service > "$(DESTDIR)$(SYSTEMD_UNIT_DIR)/pomodoro.service"; \
	chmod 644 "$(DESTDIR)$(SYSTEMD_UNIT_DIR)/pomodoro.service"; \
	echo "installed under $(DESTDIR)$(PREFIX): bin/pomodoro-server$$([ -x "$$bin/pomo" ] && echo ' bin/pomo'), share/pomodoro/web, $(SYSTEMD_UNIT_DIR)/pomodoro.service"

# The deploy folder against the real tools: systemd-analyze, nginx (and Caddy) in front of the release
# build on loopback, a WebSocket session through them, a rolling restart of three cluster nodes through
# nginx (deploy/test-cluster.sh), `make install` into a staging folder.
test-deploy: deps
	$(RELEASE_PRODUCTS)
	bash deploy/test.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# Load tests (docs/PERFORMANCE.md): the release server and `pomo-bench` side by side on loopback, each
# scenario against a server of its own on a free port (Tests/bench/run.sh). `make bench` runs them all;
# `make bench-rooms` (or -allhands, -storm, -hold) one. BENCH_ARGS passes options to pomo-bench
# (e.g. BENCH_ARGS=--json); BENCH_BUILD_FLAGS to swift build (e.g. a --scratch-path).
BENCH_SCENARIOS := rooms allhands storm hold
BENCH_ARGS ?=
BENCH_BUILD_FLAGS ?=
BENCH_BIN = $$($(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --show-bin-path)
.PHONY: bench bench-release bench-smoke $(addprefix bench-,$(BENCH_SCENARIOS))

bench-release: deps
	$(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --product pomodoro-server
	$(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --product pomo-bench

bench: bench-release
	@failed=""; for scenario in $(BENCH_SCENARIOS); do \
	  echo "== $$scenario"; \
	  bash Tests/bench/run.sh "$(BENCH_BIN)" $$scenario $(BENCH_ARGS) || failed="$$failed $$scenario"; \
	done; \
	if [ -n "$$failed" ]; then echo "failed:$$failed"; exit 1; fi

$(addprefix bench-,$(BENCH_SCENARIOS)): bench-%: bench-release
	bash Tests/bench/run.sh "$(BENCH_BIN)" $* $(BENCH_ARGS)

# Our server against the reference peers, Node `ws` (Tests/bench/peer) and Go gorilla (Tests/bench/gopeer,
# built offline from Debian's packages), the same scenarios (SCENARIO, default both workloads: storm, 10,000
# members in 1,000 rooms joining at once, and allhands, one room of 5,000) and generator options (BENCH_ARGS),
# BENCH_RUNS rounds (default 3) alternating, then tables of medians and ratios (Tests/bench/compare.sh). Ours
# runs with BENCH_DB (default sqlite, as deployed; none leaves the store out, as the peers keep nothing).
# Installs Debian's nodejs, node-ws, golang-go and gorilla when missing: these targets only, never make test.
PEER_APT_PACKAGES := nodejs node-ws golang-go golang-github-gorilla-websocket-dev
SCENARIO ?= storm allhands
BENCH_RUNS ?= 3
.PHONY: bench-compare bench-peer-deps bench-peer-smoke

bench-peer-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(PEER_APT_PACKAGES)"

bench-compare: bench-release bench-peer-deps
	BENCH_RUNS=$(BENCH_RUNS) bash Tests/bench/compare.sh "$(BENCH_BIN)" "$(SCENARIO)" $(BENCH_ARGS)

# The peer itself, quickly (not part of make test): smoke, and rooms at a small size, must deliver everything.
bench-peer-smoke: bench-peer-deps
	$(SWIFT) build $(BENCH_BUILD_FLAGS) --product pomo-bench
	BENCH_SERVER=peer bash Tests/bench/run.sh "$$($(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path)" smoke --expect-all $(BENCH_ARGS)
	BENCH_SERVER=peer bash Tests/bench/run.sh "$$($(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path)" rooms \
	  --members 1000 --rooms 100 --join-rate 1000 --warmup 1 --duration 4 --drain 3 --expect-all $(BENCH_ARGS)
	BENCH_SERVER=gopeer bash Tests/bench/run.sh "$$($(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path)" smoke --expect-all $(BENCH_ARGS)
	BENCH_SERVER=gopeer bash Tests/bench/run.sh "$$($(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path)" rooms \
	  --members 1000 --rooms 100 --join-rate 1000 --warmup 1 --duration 4 --drain 3 --expect-all $(BENCH_ARGS)

# Three cluster nodes (Redis and PostgreSQL on loopback, started and stopped by the script) beside one
# server on the same PostgreSQL, the same load spread over the nodes, CLUSTER_RUNS rounds (default 3),
# then a table of medians: tick delay on the owner and relayed, CPU per node and Redis's, PUBLISH a
# second, a forwarded command's time (Tests/bench/cluster.sh; docs/PERFORMANCE.md, "A cluster").
# CLUSTER_MODES, CLUSTER_MEMBERS, CLUSTER_ROOMS, CLUSTER_DURATION size it; BENCH_ARGS passes options.
.PHONY: bench-cluster
bench-cluster: bench-release
	bash Tests/bench/cluster.sh "$(BENCH_BIN)" $(BENCH_ARGS)

# A rolling restart under that load: three nodes (Redis and PostgreSQL on loopback), 3,000 members in 300
# rooms following close 1012, deploy/rolling-restart.sh run across the nodes in the window; per member the
# longest run of seconds missed, every command answered ok checked in PostgreSQL afterwards, the journal
# (no session twice or missing), each room's hand-off time and each node's SIGTERM-to-exit time, then
# medians over ROLLING_RUNS rounds (Tests/bench/rolling.sh; docs/PERFORMANCE.md, "Rolling restart").
# ROLLING_MEMBERS, ROLLING_ROOMS, ROLLING_DURATION size it; ROLLING_JSON=1 prints the figures as JSON.
.PHONY: bench-rolling
bench-rolling: bench-release
	bash Tests/bench/rolling.sh "$(BENCH_BIN)" $(BENCH_ARGS)

# A few hundred members for a few seconds, debug build: every member must join and every tick due must
# arrive, against one server and then spread over three cluster nodes (Redis and PostgreSQL on loopback,
# about 16 s). Timings are printed but never judged (make test runs this on loaded machines).
bench-smoke: deps
	$(SWIFT) build $(BENCH_BUILD_FLAGS) --product pomodoro-server
	$(SWIFT) build $(BENCH_BUILD_FLAGS) --product pomo-bench
	bash Tests/bench/run.sh "$$($(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path)" smoke --expect-all $(BENCH_ARGS)
	CLUSTER_SMOKE=1 bash Tests/bench/cluster.sh "$$($(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path)"
