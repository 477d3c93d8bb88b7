#!/usr/bin/env bash
# Builds the Go reference peer offline, from Debian's golang-go and golang-github-gorilla-websocket-dev
# (GOPATH mode over /usr/share/gocode; nothing is downloaded):  Tests/bench/gopeer/build.sh OUTPUT
set -euo pipefail
out="${1:?usage: build.sh OUTPUT}"
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null || { echo "gopeer/build.sh: needs go (Debian's golang-go; make bench-compare installs it)" >&2; exit 1; }
[ -d /usr/share/gocode/src/github.com/gorilla/websocket ] \
  || { echo "gopeer/build.sh: needs Debian's golang-github-gorilla-websocket-dev" >&2; exit 1; }
cache="${GOCACHE:-${TMPDIR:-/tmp}/pomodoro-gopeer-cache}"
cd "$here"
GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOPROXY=off GOCACHE="$cache" go build -o "$out" .
