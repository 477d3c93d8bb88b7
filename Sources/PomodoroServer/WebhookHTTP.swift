import CCurl
import Glibc

/// One POST of a webhook delivery through libcurl: the only code that touches libcurl, and the one place its
/// errors become Swift errors. No redirects are followed, no proxy is used (one from the environment would
/// connect for us and hide the address), only http and https, and every address a connection is about to be
/// made to is checked first (`WebhookAddress`), so a name resolving to a private address is refused at the
/// moment of connecting, every attempt.
///
/// Blocks its caller up to the timeout: called on the delivery thread only.
struct WebhookHTTP {
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

    /// libcurl's process-wide set-up, once, before any thread uses it.
    static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// Sends the request; returns the HTTP status the receiver answered (a 3xx is not followed).
    static func post(_ request: Request) -> Result<Int, Failure> {
        guard initialised, let curl = curl_easy_init() else { return .failure(.transport("libcurl could not start")) }
        defer { curl_easy_cleanup(curl) }
        let guardBox = AddressGuard(allowPrivate: request.allowPrivate)
        let context = Unmanaged.passUnretained(guardBox)
        defer { withExtendedLifetime(guardBox) {} }
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        for header in request.headers { headers = curl_slist_append(headers, "\(header.name): \(header.value)") }
        headers = curl_slist_append(headers, "Expect:")
        let code: CURLcode = request.url.withCString { url in
            request.body.withUnsafeBufferPointer { body in
                var steps: [CURLcode] = [
                    pomodoro_curl_set_pointer(curl, CURLOPT_URL, url),
                    pomodoro_curl_set_long(curl, CURLOPT_NOSIGNAL, 1),
                    pomodoro_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0),
                    pomodoro_curl_set_pointer(curl, CURLOPT_PROTOCOLS_STR, "http,https"),
                    pomodoro_curl_set_pointer(curl, CURLOPT_PROXY, ""),
                    pomodoro_curl_set_long(curl, CURLOPT_TIMEOUT_MS, request.timeoutMs),
                    pomodoro_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, request.timeoutMs),
                    pomodoro_curl_set_pointer(curl, CURLOPT_USERAGENT, "Pomodoro-Webhooks/1"),
                    pomodoro_curl_set_long(curl, CURLOPT_POST, 1),
                    pomodoro_curl_set_size(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                    pomodoro_curl_set_pointer(curl, CURLOPT_POSTFIELDS, body.baseAddress ?? UnsafePointer(bitPattern: 1)),
                    pomodoro_curl_set_pointer(curl, CURLOPT_HTTPHEADER, headers),
                    pomodoro_curl_set_write(curl, discardBody),
                    pomodoro_curl_set_open_socket(curl, openCheckedSocket),
                    pomodoro_curl_set_pointer(curl, CURLOPT_OPENSOCKETDATA, context.toOpaque()),
                ]
                if let failed = steps.first(where: { $0 != CURLE_OK }) { return failed }
                steps.removeAll()
                return curl_easy_perform(curl)
            }
        }
        if let refused = guardBox.refused { return .failure(.refusedAddress(refused)) }
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
}

/// What the socket callback needs: whether private addresses may be reached, and what it refused.
private final class AddressGuard {
    let allowPrivate: Bool
    var refused: String?
    init(allowPrivate: Bool) { self.allowPrivate = allowPrivate }
}

/// The receiver's answer is not read: only its status counts.
private let discardBody: curl_write_callback = { _, size, count, _ in size * count }

/// Opens the socket for a connection libcurl is about to make, unless its address is one webhooks may not
/// reach: then the connection fails and the guard says why.
private let openCheckedSocket: curl_opensocket_callback = { context, _, address in
    guard let context, let address else { return CURL_SOCKET_BAD }
    let guardBox = Unmanaged<AddressGuard>.fromOpaque(context).takeUnretainedValue()
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
    if !guardBox.allowPrivate, let why = WebhookAddress.refusal(bytes) {
        guardBox.refused = why
        return CURL_SOCKET_BAD
    }
    return socket(family, address.pointee.socktype, address.pointee.protocol)
}
