"""The OpenAPI document is valid OpenAPI 3.1, and the real server answers as it says.

Every request goes to the server run.sh started on loopback; each answer's status must be one the document
lists for that path and method, and a JSON body must match the schema the document gives it.
"""
import argparse
import json
import sys
import time
import urllib.error
import urllib.request

import jsonschema
from openapi_spec_validator import validate

failures = []
checked = []


def request(base, method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def check(document, base, method, path, template, body=None, token=None, expect=None):
    """Calls the endpoint and checks the answer against the document; returns the parsed JSON body (or text)."""
    status, content_type, raw = request(base, method, path, body, token)
    operation = document["paths"][template][method.lower()]
    what = f"{method} {path} -> {status}"
    checked.append(what)
    if expect is not None and status != expect:
        failures.append(f"{what}: expected {expect}: {raw[:200]!r}")
    answer = operation["responses"].get(str(status))
    if answer is None:
        failures.append(f"{what}: the document lists no {status} for {method} {template}")
        return None
    media = content_type.split(";")[0].strip()
    content = answer.get("content", {})
    listed = {m.split(";")[0] for m in content}
    if content and media not in listed:
        failures.append(f"{what}: content type {media} not among {sorted(listed)}")
    if media != "application/json":
        return raw.decode("utf-8", "replace")
    parsed = json.loads(raw)
    schema = next(v["schema"] for m, v in content.items() if m.split(";")[0] == media)
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "components": document["components"], **schema}
    try:
        jsonschema.validate(parsed, root, cls=jsonschema.Draft202012Validator)
    except jsonschema.ValidationError as error:
        failures.append(f"{what}: {error.message} at {list(error.absolute_path)}")
    return parsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--document", required=True)
    args = parser.parse_args()
    with open(args.document, encoding="utf-8") as f:
        document = json.load(f)
    validate(document)  # raises on an invalid OpenAPI 3.1 document
    base = args.base

    served = check(document, base, "GET", "/api/openapi.json", "/api/openapi.json", expect=200)
    if served != document:
        failures.append("GET /api/openapi.json does not serve web/openapi.json")
    check(document, base, "GET", "/healthz", "/healthz", expect=200)
    check(document, base, "GET", "/readyz", "/readyz", expect=200)
    check(document, base, "GET", "/metrics", "/metrics", expect=200)
    check(document, base, "GET", "/r/team", "/r/{room}", expect=200)

    # A room made over HTTP, with its first token.
    room = f"api-{int(time.time() * 1000) % 10_000_000}"
    made = check(document, base, "POST", "/api/rooms", "/api/rooms",
                 body={"room": room, "settings": {"focus": 60, "shortBreak": 60, "longBreak": 120,
                                                  "longBreakEvery": 4, "autoStart": False},
                       "control": "host", "tokenName": "ci"}, expect=201)
    token = made["token"]["token"] if made else None
    if made and (made["room"]["settings"]["focus"] != 60 or made["room"]["control"] != "host"):
        failures.append(f"the room made has other settings: {made['room']}")
    check(document, base, "POST", "/api/rooms", "/api/rooms", body={"room": room}, expect=409)
    check(document, base, "POST", "/api/rooms", "/api/rooms", body={"room": "bad name!"}, expect=400)
    check(document, base, "POST", "/api/rooms", "/api/rooms", body={"room": "x" * 20_000}, expect=413)
    check(document, base, "POST", "/api/rooms", "/api/rooms",
          body={"room": room + "x", "settings": {"focus": 0, "shortBreak": 60, "longBreak": 60,
                                                 "longBreakEvery": 4, "autoStart": False}}, expect=400)

    commands = f"/api/rooms/{room}/commands"
    template = "/api/rooms/{room}/commands"
    ok = check(document, base, "POST", commands, template, body={"type": "start", "ref": 7}, token=token, expect=200)
    if ok and (ok["command"] != "start" or ok.get("ref") != 7):
        failures.append(f"start answered {ok}")
    check(document, base, "POST", commands, template, body={"type": "start"}, token=token, expect=409)
    check(document, base, "POST", commands, template, body={"type": "extend", "seconds": 60}, token=token, expect=200)
    check(document, base, "POST", commands, template, body={"type": "task", "text": "x"}, token=token, expect=400)
    check(document, base, "POST", commands, template, body={"type": "pause"}, token="pomo_" + "0" * 64, expect=401)
    check(document, base, "POST", commands, template, body={"type": "pause"}, expect=401)
    check(document, base, "POST", commands, template, body={"type": "nonsense"}, token=token, expect=400)
    check(document, base, "POST", commands, template, body={"type": "pause", "pad": "x" * 20_000}, token=token, expect=413)
    check(document, base, "POST", "/api/rooms/nobody-here/commands", template, body={"type": "start"}, token=token,
          expect=404)

    # The schedule commands, as the wire has them, with their answers.
    schedule = {"name": "Standup", "time": "09:30", "zone": "UTC", "date": None, "days": ["mon", "thu"],
                "settings": None, "sessions": 2}
    added = check(document, base, "POST", commands, template, body={"type": "addSchedule", "schedule": schedule, "ref": "a"},
                  token=token, expect=200)
    if added and (added.get("command") != "addSchedule" or added.get("ref") != "a"):
        failures.append(f"addSchedule answered {added}")
    check(document, base, "POST", commands, template, body={"type": "addSchedule", "schedule": {**schedule, "time": "25:00"}},
          token=token, expect=400)
    check(document, base, "POST", commands, template, body={"type": "switchSchedule", "id": "s1", "enabled": False},
          token=token, expect=200)
    listed = check(document, base, "POST", commands, template, body={"type": "schedules"}, token=token, expect=200)
    if listed and [(s["id"], s["schedule"]["enabled"]) for s in listed.get("schedules", [])] != [("s1", False)]:
        failures.append(f"the schedules listed over the API: {listed}")
    kept = check(document, base, "GET", f"/api/rooms/{room}/schedules", "/api/rooms/{room}/schedules", expect=200)
    if kept and [s["id"] for s in kept["schedules"]] != ["s1"]:
        failures.append(f"GET schedules after the API added one: {kept}")
    check(document, base, "POST", commands, template, body={"type": "deleteSchedule", "id": "s1"}, token=token, expect=200)
    check(document, base, "POST", commands, template, body={"type": "addSchedule", "schedule": schedule},
          token="pomo_" + "0" * 64, expect=401)

    snapshot = check(document, base, "GET", f"/api/rooms/{room}", "/api/rooms/{room}", expect=200)
    if snapshot and (snapshot["status"] != "running" or snapshot["phase"] != "focus"):
        failures.append(f"the room did not start: {snapshot['phase']} {snapshot['status']}")
    check(document, base, "POST", commands, template, body={"type": "reset"}, token=token, expect=200)
    check(document, base, "GET", f"/api/rooms/{room}/stats?days=7", "/api/rooms/{room}/stats", expect=200)
    check(document, base, "GET", f"/api/rooms/{room}/stats?days=0", "/api/rooms/{room}/stats", expect=400)
    check(document, base, "GET", f"/api/rooms/{room}/history", "/api/rooms/{room}/history", expect=200)
    check(document, base, "GET", f"/api/rooms/{room}/history?format=csv", "/api/rooms/{room}/history", expect=200)
    check(document, base, "GET", f"/api/rooms/{room}/schedules", "/api/rooms/{room}/schedules", expect=200)
    check(document, base, "GET", f"/api/rooms/{room}/calendar.ics", "/api/rooms/{room}/calendar.ics", expect=200)
    check(document, base, "GET", "/api/rooms/nobody-here", "/api/rooms/{room}", expect=404)
    check(document, base, "GET", "/api/cluster", "/api/cluster", expect=404)

    for line in checked:
        print("checked", line)
    if failures:
        print("\n".join(["FAILED:"] + failures))
        sys.exit(1)
    print(f"OpenAPI document valid; {len(checked)} answers match it")


if __name__ == "__main__":
    main()
