import CCurl
import Glibc

/// Webhook POSTs through libcurl's multi interface: the only code that touches libcurl, and the one place its
/// errors become Swift errors. Many transfers run at once on the one thread that drives them (the delivery
/// thread), so a receiver that takes its whole timeout holds up its own webhook only.
///
/// No redirects are followed, no proxy is used (one from the environment would connect for us and hide the
/// address), only http and https, and every address a connection is about to be made to is checked first
/// (`WebhookAddress`), so a name resolving to a private address is refused at the moment of connecting,
/// every attempt. Names are resolved by libcurl's resolver threads, never blocking the driving thread.
///
/// Confined to the thread that drives it (not Sendable); other threads end its `wait` through its
/// `WebhookWaker`, which it polls with the transfers.
final class WebhookHTTP {
    struct Request {
        var url: String
        var body: [UInt8]
        var headers: [(name: String, value: String)]
        var timeoutMs: Int
        var allowPrivate: Bool
    }

    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The destination resolved to an address webhooks may not reach.
        case refusedAddress(String)
        case timedOut
        /// Could not resolve, connect, or talk HTTP; libcurl's words.
        case transport(String)

        var description: String {
            switch self {
            case .refusedAddress(let why): "refused: the destination is a \(why) address (see --webhook-allow-private)"
            case .timedOut: "timed out"
            case .transport(let message): message
            }
        }
    }

    /// A finished transfer: the tag it was started with, and the HTTP status the receiver answered (a 3xx is
    /// not followed) or why there is none.
    struct Finished {
        var tag: Int
        var result: Result<Int, Failure>
    }

    /// libcurl's process-wide set-up, once, before any thread uses it.
    static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    private let multi: UnsafeMutableRawPointer
    private let waker: WebhookWaker
    /// The transfers running, by their easy handle.
    private var running: [UnsafeMutableRawPointer: Transfer] = [:]

    /// nil when libcurl cannot start.
    init?(waker: WebhookWaker) {
        guard Self.initialised, let multi = curl_multi_init() else { return nil }
        self.multi = multi
        self.waker = waker
    }

    deinit {
        abandonAll()
        curl_multi_cleanup(multi)
    }

    /// Transfers started and not yet finished.
    var count: Int { running.count }

    /// Starts a POST; its result comes from a later `perform()` under `tag`. A request libcurl cannot even
    /// take fails at once.
    func start(_ request: Request, tag: Int) -> Failure? {
        guard let curl = curl_easy_init() else { return .transport("libcurl could not start a transfer") }
        let transfer = Transfer(curl: curl, tag: tag, allowPrivate: request.allowPrivate)
        for header in request.headers {
            transfer.headers = curl_slist_append(transfer.headers, "\(header.name): \(header.value)")
        }
        transfer.headers = curl_slist_append(transfer.headers, "Expect:")
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        let code: CURLcode = request.url.withCString { url in
            request.body.withUnsafeBufferPointer { body in
                // libcurl copies every string option given here, and the body (COPYPOSTFIELDS, after its size);
                // the header list and the context live in `transfer` until the transfer ends.
                let steps: [() -> CURLcode] = [
                    { pomodoro_curl_set_pointer(curl, CURLOPT_URL, url) },
                    { pomodoro_curl_set_long(curl, CURLOPT_NOSIGNAL, 1) },
                    { pomodoro_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0) },
                    { pomodoro_curl_set_pointer(curl, CURLOPT_PROTOCOLS_STR, "http,https") },
                    { pomodoro_curl_set_pointer(curl, CURLOPT_PROXY, "") },
                    { pomodoro_curl_set_long(curl, CURLOPT_TIMEOUT_MS, request.timeoutMs) },
                    { pomodoro_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, request.timeoutMs) },
                    { pomodoro_curl_set_pointer(curl, CURLOPT_USERAGENT, "Pomodoro-Webhooks/1") },
                    { pomodoro_curl_set_long(curl, CURLOPT_POST, 1) },
                    { pomodoro_curl_set_size(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) },
                    { pomodoro_curl_set_pointer(curl, CURLOPT_COPYPOSTFIELDS,
                                                body.baseAddress ?? UnsafePointer(bitPattern: 1)) },
                    { pomodoro_curl_set_pointer(curl, CURLOPT_HTTPHEADER, transfer.headers) },
                    { pomodoro_curl_set_write(curl, discardBody) },
                    { pomodoro_curl_set_open_socket(curl, openCheckedSocket) },
                    { pomodoro_curl_set_pointer(curl, CURLOPT_OPENSOCKETDATA, context) },
                ]
                for step in steps {
                    let code = step()
                    if code != CURLE_OK { return code }
                }
                return CURLE_OK
            }
        }
        guard code == CURLE_OK else {
            transfer.release()
            return .transport(String(cString: curl_easy_strerror(code)))
        }
        let added = curl_multi_add_handle(multi, curl)
        guard added == CURLM_OK else {
            transfer.release()
            return .transport(String(cString: curl_multi_strerror(added)))
        }
        running[curl] = transfer
        return nil
    }

    /// Moves every transfer on as far as it can go without waiting; returns those that ended.
    func perform() -> [Finished] {
        var stillRunning: Int32 = 0
        _ = curl_multi_perform(multi, &stillRunning)
        var finished: [Finished] = []
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let curl = message.pointee.easy_handle,
                  let transfer = running.removeValue(forKey: curl) else { continue }
            let code = message.pointee.data.result
            finished.append(Finished(tag: transfer.tag, result: transfer.outcome(code)))
            curl_multi_remove_handle(multi, curl)
            transfer.release()
        }
        return finished
    }

    /// Waits up to `ms` for a transfer to have something to do (libcurl's own timers shorten it), or for
    /// the waker.
    func wait(upToMs ms: Int64) {
        var ready: Int32 = 0
        var extra = curl_waitfd(fd: waker.fd, events: Int16(CURL_WAIT_POLLIN), revents: 0)
        _ = curl_multi_poll(multi, &extra, 1, Int32(clamping: ms), &ready)
        if extra.revents != 0 { waker.drain() }
    }

    /// Drops every running transfer without a result (the deliverer is stopping: what was in flight is sent
    /// again by the next run, under the same event id).
    func abandonAll() {
        for (curl, transfer) in running {
            curl_multi_remove_handle(multi, curl)
            transfer.release()
        }
        running.removeAll()
    }
}

/// Ends a wait of the delivery thread from any thread: a non-blocking pipe whose reading end `WebhookHTTP.wait`
/// polls beside its transfers (and `wait(upToMs:)` alone when libcurl could not start). A wake-up before the
/// wait ends it at once; many before it end it once.
final class WebhookWaker: Sendable {
    /// The reading end, polled; `writer` is written to wake.
    let fd: Int32
    private let writer: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        fd = ends[0]
        writer = ends[1]
    }

    deinit {
        if fd >= 0 { close(fd) }
        if writer >= 0 { close(writer) }
    }

    func wake() {
        var one: UInt8 = 1
        _ = write(writer, &one, 1)  // a full pipe already holds a wake-up
    }

    /// Clears the wake-ups so far.
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(fd, &bytes, bytes.count) > 0 {}
    }

    /// Waits up to `ms` for a wake-up, and clears it.
    func wait(upToMs ms: Int64) {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&entry, 1, Int32(clamping: ms)) > 0 { drain() }
    }
}

/// One transfer's easy handle and what must live as long as it: the header list, and what the socket
/// callback needs (whether private addresses may be reached, and what it refused).
private final class Transfer {
    let curl: UnsafeMutableRawPointer
    let tag: Int
    let allowPrivate: Bool
    var headers: UnsafeMutablePointer<curl_slist>?
    var refused: String?

    init(curl: UnsafeMutableRawPointer, tag: Int, allowPrivate: Bool) {
        self.curl = curl
        self.tag = tag
        self.allowPrivate = allowPrivate
    }

    func outcome(_ code: CURLcode) -> Result<Int, WebhookHTTP.Failure> {
        if let refused { return .failure(.refusedAddress(refused)) }
        guard code == CURLE_OK else {
            if code == CURLE_OPERATION_TIMEDOUT { return .failure(.timedOut) }
            return .failure(.transport(String(cString: curl_easy_strerror(code))))
        }
        var status = 0
        guard pomodoro_curl_response_code(curl, &status) == CURLE_OK else {
            return .failure(.transport("no status in the answer"))
        }
        return .success(status)
    }

    /// Frees the handle and the header list; once.
    func release() {
        curl_easy_cleanup(curl)
        curl_slist_free_all(headers)
        headers = nil
    }
}

/// The receiver's answer is not read: only its status counts.
private let discardBody: curl_write_callback = { _, size, count, _ in size * count }

/// Opens the socket for a connection libcurl is about to make, unless its address is one webhooks may not
/// reach: then the connection fails and the transfer says why.
private let openCheckedSocket: curl_opensocket_callback = { context, _, address in
    guard let context, let address else { return CURL_SOCKET_BAD }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let family = address.pointee.family
    var bytes: [UInt8] = []
    withUnsafePointer(to: &address.pointee.addr) { raw in
        raw.withMemoryRebound(to: UInt8.self, capacity: Int(address.pointee.addrlen)) { p in
            if family == AF_INET {
                // sockaddr_in: family (2), port (2), address (4).
                bytes = Array(UnsafeBufferPointer(start: p + 4, count: 4))
            } else if family == AF_INET6 {
                // sockaddr_in6: family (2), port (2), flow info (4), address (16).
                bytes = Array(UnsafeBufferPointer(start: p + 8, count: 16))
            }
        }
    }
    if !transfer.allowPrivate, let why = WebhookAddress.refusal(bytes) {
        transfer.refused = why
        return CURL_SOCKET_BAD
    }
    return socket(family, address.pointee.socktype, address.pointee.protocol)
}
