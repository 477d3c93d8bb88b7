#!/usr/bin/env python3
"""Joins a Pomodoro room over WebSocket and checks the welcome: a smoke test for a deployment.

    python3 deploy/smoke.py wss://focus.example.com/ws
    python3 deploy/smoke.py wss://focus.example.com/ws --origin https://focus.example.com --idle 70

Standard library only. Exit status 0 and one line starting with "ok:" when the check passed.
--idle N stays connected and silent for N seconds (answering the server's pings) and then checks that the
session still answers: longer than a proxy's read timeout, it shows the proxy keeps idle sessions open.
--start starts the room's timer after joining (then --idle N keeps it ticking for N seconds, for metrics).
--expect-status 403 instead checks that the handshake is refused with that HTTP status (e.g. a foreign Origin).
"""
import argparse, base64, json, os, socket, ssl, struct, sys, time, urllib.parse


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def send_frame(sock, opcode, payload):
    mask = os.urandom(4)  # clients mask every frame (RFC 6455 5.3)
    length = len(payload)
    header = bytes([0x80 | opcode])
    if length < 126:
        header += bytes([0x80 | length])
    elif length < 65536:
        header += bytes([0x80 | 126]) + struct.pack("!H", length)
    else:
        header += bytes([0x80 | 127]) + struct.pack("!Q", length)
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def read_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            fail("the connection closed")
        data += chunk
    return data


def next_message(sock, deadline):
    """The next text message as JSON, answering pings on the way."""
    while True:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            first, second = read_exact(sock, 2)
        except socket.timeout:
            return None
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", read_exact(sock, 2))[0]
        elif length == 127:
            length = struct.unpack("!Q", read_exact(sock, 8))[0]
        payload = read_exact(sock, length)
        opcode = first & 0x0F
        if opcode == 0x9:
            send_frame(sock, 0xA, payload)
        elif opcode == 0x8:
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            fail(f"the server closed the session ({code} {payload[2:].decode(errors='replace')})")
        elif opcode == 0x1:
            return json.loads(payload)


def wait_for(sock, wanted, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        message = next_message(sock, deadline)
        if message and message.get("type") == wanted:
            return message
        if message and message.get("type") == "error":
            fail(f"error: {message}")
    fail(f"no {wanted} within {seconds} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="ws://host:port/ws or wss://host/ws")
    parser.add_argument("--origin", help="send this Origin header, as a browser would")
    parser.add_argument("--connect", metavar="HOST:PORT", help="connect here instead of the URL's address")
    parser.add_argument("--cafile", help="trust this certificate (e.g. a self-signed one)")
    parser.add_argument("--insecure", action="store_true", help="do not verify the certificate")
    parser.add_argument("--room", default=f"smoke-{os.urandom(3).hex()}")
    parser.add_argument("--idle", type=float, default=0)
    parser.add_argument("--start", action="store_true")
    parser.add_argument("--expect-status", type=int)
    args = parser.parse_args()

    url = urllib.parse.urlsplit(args.url)
    secure = url.scheme == "wss"
    port = url.port or (443 if secure else 80)
    address = args.connect.rsplit(":", 1) if args.connect else (url.hostname, port)
    try:
        sock = socket.create_connection((address[0], int(address[1])), timeout=10)
        if secure:
            context = ssl.create_default_context(cafile=args.cafile)
            if args.insecure:
                context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            sock = context.wrap_socket(sock, server_hostname=url.hostname)
    except (OSError, ssl.SSLError) as error:
        fail(f"cannot connect to {address[0]}:{address[1]}: {error}")
    key = base64.b64encode(os.urandom(16)).decode()
    request = [f"GET {url.path or '/'} HTTP/1.1", f"Host: {url.netloc}", "Upgrade: websocket",
               "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if args.origin:
        request.append(f"Origin: {args.origin}")
    sock.sendall(("\r\n".join(request) + "\r\n\r\n").encode())
    response = b""
    while b"\r\n\r\n" not in response:
        chunk = sock.recv(4096)
        if not chunk:
            break
        response += chunk
    status_line = response.split(b"\r\n", 1)[0].decode(errors="replace")
    status = int(status_line.split()[1]) if len(status_line.split()) > 1 else 0
    if args.expect_status is not None:
        if status != args.expect_status:
            fail(f"expected HTTP {args.expect_status}, got: {status_line!r}")
        print(f"ok: the handshake was refused with {status}")
        return
    if status != 101:
        fail(f"the upgrade was refused: {status_line!r}")

    send_frame(sock, 0x1, json.dumps({"type": "join", "room": args.room, "name": "smoke", "ref": "j"}).encode())
    welcome = wait_for(sock, "welcome", 10)
    you = welcome["you"]["id"]
    if args.start:
        send_frame(sock, 0x1, json.dumps({"type": "start", "ref": "s"}).encode())
        wait_for(sock, "tick", 10)
    if args.idle:
        end = time.monotonic() + args.idle
        while time.monotonic() < end:  # stay silent; pings are answered inside next_message
            next_message(sock, end)
        send_frame(sock, 0x1, json.dumps({"type": "ping", "ref": "p"}).encode())
        wait_for(sock, "pong", 10)
    send_frame(sock, 0x1, json.dumps({"type": "leave"}).encode())
    send_frame(sock, 0x8, struct.pack("!H", 1000))
    idle = f", still answering after {args.idle:g} s idle" if args.idle else ""
    print(f"ok: joined room {args.room} as {you} through {args.url}{idle}")


if __name__ == "__main__":
    main()
