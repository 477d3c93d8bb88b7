#!/usr/bin/env python3
"""Where a server's CPU went, by layer and by activity, from a perf profile taken with DWARF call chains
(docs/PERFORMANCE.md §6, "CPU per delivered frame"):
   perf record -e cpu-clock -F 999 --call-graph dwarf,16384 -p PID -o perf.data -- sleep 8
   perf-layers.py perf.data [SECONDS FRAMES]
Each sample counts once by its leaf: the kernel by what it was doing (a send, with the loopback's delivery to
the reader that runs inside it; wake-ups; receives; ...), else the library the leaf is in; samples of threads
other than the service thread count as theirs whole (the store's writer, its readers). With SECONDS and
FRAMES (the frames delivered meanwhile), each line is also given in microseconds per frame, taking a sample
as 1/999 s. The activity (service thread only) is what the sample ran under: a room's timer, a commit's
completion (the broadcasts held for it), the library's callbacks. Works for the peers too (one thread)."""
import collections, re, subprocess, sys

ALLOC = ("malloc", "_int_malloc", "_int_free", "cfree", "free", "unlink_chunk", "malloc_consolidate", "calloc",
         "realloc", "_int_realloc", "__libc_calloc", "__libc_malloc", "__libc_free", "tcache")
SERVICE = ("pomodoro-servic", "node", "gopeer")

def kernel_part(stack):
    if re.search(r"tcp_sendmsg|sock_write_iter|sys_sendto|sys_sendmsg|do_writev|ksys_write", stack):
        return "kernel: send path (incl. loopback delivery)"
    if re.search(r"recvfrom|tcp_recvmsg|sock_read_iter|sys_recvmsg", stack):
        return "kernel: receive"
    if re.search(r"epoll_wait|timerfd|schedule|sys_read|eventfd|futex|do_nanosleep|hrtimer", stack):
        return "kernel: wake-ups (epoll, timerfd, futex, scheduling)"
    if re.search(r"accept|tcp_v4_syn|inet_csk|sys_setsockopt|sys_close|__fput", stack):
        return "kernel: accept, close, socket options"
    if re.search(r"pwrite|fdatasync|fsync|ext4|sys_pread|vfs_", stack):
        return "kernel: file I/O"
    if re.search(r"page_fault|exc_page|mmap|munmap|brk", stack):
        return "kernel: memory (faults, mmap)"
    return "kernel: other"

def layer(comm, frames, stack):
    if not comm.startswith(SERVICE):
        return f"other threads ({comm}: the store's writer and readers), all layers"
    sym, dso = frames[0] if frames else ("?", "?")
    if "kernel" in dso: return kernel_part(stack)
    if any(sym.startswith(a) for a in ALLOC): return "malloc/free"
    if re.search(r"libswift|libFoundation|libdispatch|BlocksRuntime", dso): return "Swift runtime, Foundation, dispatch"
    for key, name in (("libwebsockets", "libwebsockets"), ("json-c", "json-c"), ("sqlite", "SQLite"),
                      ("libuv", "libuv"), ("libc.so", "libc (memcpy, printf, ...)"), ("pomodoro-server", "our code")):
        if key in dso: return name
    return "other: " + dso.split("/")[-1]

def activity(comm, stack):
    if not comm.startswith("pomodoro-servic"): return f"other threads ({comm})"
    if "RoomHubC6commit" in stack or "RoomHubC4back" in stack: return "commit completions (held events, states)"
    if "timerFired" in stack or "timersFired" in stack: return "room timers (ticks, phase changes)"
    if "drainInbox" in stack: return "inbox (other work handed in)"
    if "serverCallback" in stack or "lws_" in stack: return "libwebsockets callbacks (accept, receive, writable)"
    if re.search(r"epoll_wait|uv_run|uv__io_poll", stack): return "the loop's wait and wake-up"
    return "unattributed"

def main():
    path = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 3 else None
    frames = float(sys.argv[3]) if len(sys.argv) > 3 else None
    text = subprocess.run(["perf", "script", "-i", path, "-F", "comm,tid,ip,sym,dso"],
                          capture_output=True, text=True, check=True).stdout
    layers, activities, threads, total = collections.Counter(), collections.Counter(), collections.Counter(), 0
    for sample in text.split("\n\n"):
        lines = [l for l in sample.strip().split("\n") if l.strip()]
        if not lines: continue
        total += 1
        comm = lines[0].split()[0]
        frames_ = []
        for l in lines[1:]:
            m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)$", l)
            if m: frames_.append([m.group(2), m.group(3)])
        for i in range(len(frames_) - 2, -1, -1):  # an inlined frame is in its caller's object
            if frames_[i][1] == "inlined": frames_[i][1] = frames_[i + 1][1]
        stack = " ".join(s for s, _ in frames_)
        threads[comm] += 1
        layers[layer(comm, frames_, stack)] += 1
        activities[activity(comm, stack)] += 1
    print(f"{path}: {total} samples" + (f", {100 * total / 999 / seconds:.1f}% of a core" if seconds else ""))
    for title, counts in (("threads", threads), ("layer (by the sample's leaf)", layers),
                          ("activity (the service thread's)", activities)):
        print(" " + title)
        for name, n in counts.most_common():
            per = f"  {n / 999 * 1e6 / frames:6.2f} µs/frame" if frames else ""
            print(f"  {n:6d} {100 * n / total:5.1f}%{per}  {name}")

main()
