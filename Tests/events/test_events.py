#!/usr/bin/env python3
"""GET /api/rooms/<room>/events read by an independent client (Python's requests, streaming).

Against the real server: a room running a focus streams its ticks once a second with rising ids; a reader
that stops reading is dropped while the room and the other readers go on; nobody in the room is told.
Run by Tests/events/run.sh (from make test)."""

import argparse
import json
import socket
import subprocess
import time

import requests


def pomo(binary, server, *arguments):
    result = subprocess.run([binary, *arguments, "--server", server], capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise AssertionError(f"pomo {' '.join(arguments)}: {result.returncode} {result.stderr.strip()}")
    return result.stdout


def events(response):
    """(event, id, data) for each Server-Sent Event of a streaming response; comments are ("comment", None, text)."""
    name, ident, data = None, None, []
    # One byte at a time: a larger chunk would wait for that many bytes, and hold ticks back.
    for raw in response.iter_lines(chunk_size=1, decode_unicode=True):
        if raw is None:
            continue
        if raw == "":
            if name or data:
                yield name or "message", ident, "\n".join(data)
            name, ident, data = None, None, []
        elif raw.startswith(":"):
            yield "comment", None, raw[1:].strip()
        else:
            field, _, value = raw.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "id":
                ident = value
            elif field == "data":
                data.append(value)


def ticks_arrive_once_a_second(base, room):
    with requests.get(f"{base}/api/rooms/{room}/events", stream=True, timeout=10) as response:
        assert response.status_code == 200, response.status_code
        assert response.headers["Content-Type"].startswith("text/event-stream"), response.headers
        stream = events(response)
        first = next(e for e in stream if e[0] != "comment")
        assert first[0] == "state", first
        state = json.loads(first[2])
        assert state["type"] == "state" and state["room"]["status"] == "running", state
        first_id = int(first[1])
        ticks = []
        for name, ident, data in stream:
            if name == "tick":
                ticks.append((time.monotonic(), int(ident), json.loads(data)))
            if len(ticks) == 5:
                break
    ids = [t[1] for t in ticks]
    assert ids == sorted(ids) and len(set(ids)) == len(ids) and ids[0] > first_id, f"ids not rising: {ids}"
    gaps = [b[0] - a[0] for a, b in zip(ticks, ticks[1:])]
    assert all(0.5 < gap < 1.5 for gap in gaps), f"ticks not once a second: {gaps}"
    remaining = [t[2]["remainingMs"] for t in ticks]
    assert remaining == sorted(remaining, reverse=True), remaining
    print(f"  ticks: ids {ids}, gaps {[round(g, 2) for g in gaps]} s")


def a_reader_that_stops_reading_is_dropped(base, room, pomo_binary, server):
    host, port = base.split("//")[1].split(":")
    # A reader with the smallest receive buffer the kernel allows, that reads the head and then nothing.
    stalled = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    stalled.connect((host, int(port)))
    stalled.sendall(f"GET /api/rooms/{room}/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    head = stalled.recv(512)
    assert head.startswith(b"HTTP/1.1 200"), head[:80]

    with requests.get(f"{base}/api/rooms/{room}/events", stream=True, timeout=10) as steady:
        stream = events(steady)
        # The first check's reader has hung up; the server forgets it by the room's next tick.
        deadline = time.monotonic() + 5
        while streams_open(base) != 2:
            assert time.monotonic() < deadline, f"{streams_open(base)} streams open, not 2"
            time.sleep(0.1)  # polling /metrics, bounded by the deadline
        # Traffic: brief members who come, extend the focus, and go (each a few states and events), until the
        # server drops the reader that does not read (it is never read from meanwhile).
        started = time.monotonic()
        runs = 0
        while streams_open(base) == 2:
            assert time.monotonic() - started < 60, f"the stalled reader was still connected after {runs} runs"
            # Back and forth, so the phase never reaches its longest.
            pomo(pomo_binary, server, "extend", room, "1m" if runs % 2 == 0 else "-1m", "--quiet")
            runs += 1
        print(f"  the stalled reader was dropped after {runs} runs ({time.monotonic() - started:.1f} s)")
        assert streams_open(base) == 1
        assert dropped(stalled), "the stalled reader's connection is still open"
        # The room goes on: the steady reader still gets ticks, and the room is still running.
        seen = 0
        for name, _, _ in stream:
            if name == "tick":
                seen += 1
            if seen == 2:
                break
    room_now = requests.get(f"{base}/api/rooms/{room}", timeout=5).json()
    assert room_now["status"] == "running", room_now


def streams_open(base):
    """The server's count of event streams, from /metrics."""
    for line in requests.get(f"{base}/metrics", timeout=5).text.splitlines():
        if line.startswith("pomodoro_event_streams "):
            return int(float(line.split()[1]))
    raise AssertionError("/metrics has no pomodoro_event_streams")


def dropped(sock):
    """Whether the server has closed the socket: drains what it holds and looks for the end."""
    sock.settimeout(2)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", required=True)
    parser.add_argument("--pomo", required=True)
    args = parser.parse_args()
    server = "ws://" + args.base.split("//")[1]
    room = f"sse-{int(time.time() * 1000) % 100000}"
    # Nothing to observe before a room is open.
    assert requests.get(f"{args.base}/api/rooms/{room}/events", timeout=5).status_code == 404
    # pomo's control commands press only in a room that is open: the room is made first, as a script would.
    made = requests.post(f"{args.base}/api/rooms", json={"room": room}, timeout=5)
    assert made.status_code == 201, f"POST /api/rooms: {made.status_code} {made.text}"
    pomo(args.pomo, server, "start", room, "--quiet")
    passed = failed = 0
    for name, check in [
        ("SSE: a running room's ticks arrive once a second with rising ids",
         lambda: ticks_arrive_once_a_second(args.base, room)),
        ("SSE: a reader that stops reading is dropped, and the room goes on",
         lambda: a_reader_that_stops_reading_is_dropped(args.base, room, args.pomo, server)),
    ]:
        try:
            check()
        except Exception as error:  # one failing check must not hide the others
            failed += 1
            print(f"FAIL {name}: {error!r}")
        else:
            passed += 1
            print(f"PASS {name}")
    print(f"{passed} passed, {failed} failed")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
