#!/usr/bin/env bash
# The HTTP API against its OpenAPI document (web/openapi.json): the document validated by PyPI's
# openapi-spec-validator, then the real server's answers on a free loopback port checked against the
# document's schemas with jsonschema (both installed from PyPI when missing).
#   bash Tests/api/run.sh path/to/pomodoro-server
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/Tests/lib/common.sh"
pip_modules openapi_spec_validator:openapi-spec-validator jsonschema:jsonschema
start_server "$1" --web-root "$root/web" --min-focus 1
python3 "$root/Tests/api/test_openapi.py" --base "http://127.0.0.1:$port" --document "$root/web/openapi.json"
