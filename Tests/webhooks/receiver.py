#!/usr/bin/env python3
"""A webhook receiver for the tests: an http.server on 127.0.0.1 (a free port, printed as `listening PORT`)
that records every request it gets as one JSON line in RECORD_FILE, and answers as the request's path asks:

  /ok                     200
  /fail?first=N           500 to the first N requests on this path, then 200
  /slow?first=N           sleeps 7 s (longer than the server's 5 s timeout) on the first N, then 200
  /gate                   503 while the file GATE_FILE exists, then 200
  /stall                  holds the request (no answer) while the file STALL_FILE exists, 60 s at most, then 200

Every request is also noted in ARRIVED_FILE (its path and body) the moment it arrives, before it is answered.

Each record says whether the `Pomodoro-Signature` header is valid, checked here with Python's own hmac and
the secret in SECRET_FILE (when that file exists): an implementation independent of the server's.
"""
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

folder = sys.argv[1]
RECORD_FILE = os.path.join(folder, "received.jsonl")
SECRET_FILE = os.path.join(folder, "secret")
GATE_FILE = os.path.join(folder, "gate")
STALL_FILE = os.path.join(folder, "stall")
ARRIVED_FILE = os.path.join(folder, "arrived.jsonl")
lock = threading.Lock()
seen = {}


def signature_valid(header, body):
    """True or False when a secret is known, None otherwise: t=<seconds>,v1=<hex of HMAC-SHA256(t.body)>."""
    if not os.path.exists(SECRET_FILE):
        return None
    with open(SECRET_FILE) as f:
        secret = f.read().strip()
    try:
        parts = dict(item.split("=", 1) for item in header.split(","))
        expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, parts["v1"]) and abs(time.time() - int(parts["t"])) < 300
    except (KeyError, ValueError):
        return False


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        url = urlsplit(self.path)
        first = int(parse_qs(url.query).get("first", ["0"])[0])
        with lock:
            count = seen.get(self.path, 0)
            seen[self.path] = count + 1
            with open(ARRIVED_FILE, "a") as f:
                f.write(json.dumps({"path": url.path, "body": body.decode("utf-8", "replace")}) + "\n")
        status = 200
        if url.path == "/fail" and count < first:
            status = 500
        elif url.path == "/slow" and count < first:
            time.sleep(7)
        elif url.path == "/gate" and os.path.exists(GATE_FILE):
            status = 503
        elif url.path == "/stall":
            held_until = time.time() + 60
            while os.path.exists(STALL_FILE) and time.time() < held_until:
                time.sleep(0.05)
        record = {
            "path": url.path, "status": status, "at": time.time(),
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body.decode("utf-8", "replace"),
            "signature_valid": signature_valid(self.headers.get("Pomodoro-Signature", ""), body)
            if "Pomodoro-Signature" in self.headers else None,
        }
        with lock:
            with open(RECORD_FILE, "a") as f:
                f.write(json.dumps(record) + "\n")
        try:
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        except OSError:
            pass  # the server under test gave up waiting (a timeout): that is what the test wants

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
