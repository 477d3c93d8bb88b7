# Pomodoro: `make run` starts the server on :8080, `make test` runs every test.
# Both install what is missing first (Debian packages through apt-get), so a fresh machine needs nothing by hand.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
APT_PACKAGES := libwebsockets-dev libjson-c-dev pkg-config tmux
PORT ?= 8080
HOST ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build release run test test-unit test-browser clean

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

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	bash Tests/browser/run.sh "$$($(SWIFT) build --show-bin-path)/pomodoro-server"

# The web page in headless Chromium against the real server (Tests/browser/README.md).
test-browser: build
	bash Tests/browser/run.sh "$$($(SWIFT) build --show-bin-path)/pomodoro-server"

clean:
	rm -rf .build
