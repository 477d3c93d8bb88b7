import PomodoroCore
import PomodoroNet
import PomodoroProtocol

// The HTTP API's errors, in their two shapes: the rest of /api answers `{"error": …}` (`errorResponse`), the
// control API's commands path answers the wire's `error` message (`wireError`); each with the status and the
// headers (`WWW-Authenticate`, `Retry-After`) that tell a client what to do about it. A router that answers
// paths of its own, or forwards a command, answers with these too.

extension HTTPAPI {
    /// Whether a client address is this host's loopback (127.0.0.0/8, ::1, or IPv4-mapped 127.x).
    package static func isLoopback(_ address: String) -> Bool {
        var host = address.lowercased()
        if host.hasPrefix("::ffff:") { host.removeFirst("::ffff:".count) }
        return host == "::1" || (host.hasPrefix("127.") && host.split(separator: ".").count == 4)
    }

    /// An API error as JSON, with the headers that tell a client what to do about it.
    package static func errorResponse(_ refusal: Refusal) -> HTTPResponse {
        var response = HTTPResponse(status: refusal.code.httpStatus, contentType: "application/json",
                                    body: WireCodec.encodeHTTPError(code: refusal.code, message: refusal.message,
                                                                    field: refusal.field))
        if refusal.code == .badPasscode { response.headers.append((name: "WWW-Authenticate", value: "Bearer realm=\"pomodoro\"")) }
        if refusal.code == .rateLimited {
            response.headers.append((name: "Retry-After", value: refusal.field == "passcode" ? "60" : "1"))
        }
        return response
    }

    /// The shape of a path's errors: the commands path's as the wire's `error`, the rest of /api as
    /// `{"error": …}`, other paths as plain text.
    package enum ErrorShape {
        case text, api, wire
    }

    /// `405` with `Allow`: a path the server knows, asked with a method it does not answer there.
    package static func methodNotAllowed(allow: [HTTPMethod], as shape: ErrorShape) -> HTTPResponse {
        let names = allow.map(\.rawValue)
        let message = "only \(names.joined(separator: " and ")) \(names.count == 1 ? "is" : "are") answered here"
        var response = switch shape {
        case .text: HTTPResponse(status: 405, text: message + "\n")
        case .api: errorResponse(Refusal(code: .badRequest, message: message, field: "method"))
        case .wire: wireError(Refusal(code: .badRequest, message: message, field: "method"))
        }
        response.status = 405
        response.headers.append((name: "Allow", value: names.joined(separator: ", ")))
        return response
    }

    /// What the paths that are read answer: GET, and HEAD as the transport gives it.
    package static let readMethods: [HTTPMethod] = [.get, .head]

    static let roomExists = Refusal(code: .invalidState, message: "a room of that name exists; join it", field: "room")

    static func refusal(_ error: RoomError) -> Refusal {
        let wire = ProtocolError(error)
        return Refusal(code: wire.code, message: wire.message, field: wire.field)
    }

    /// The status of a refusal on the control API's paths: as the rest of /api, but a conflict with the
    /// room's state is 409 and a limit on rooms 429.
    static func status(of code: ErrorCode) -> Int {
        switch code {
        case .invalidState: 409
        case .roomLimit: 429
        default: code.httpStatus
        }
    }

    /// A refusal of `POST /api/rooms`, in the shape of the rest of /api.
    static func apiError(_ refusal: Refusal) -> HTTPResponse {
        var response = errorResponse(refusal)
        response.status = status(of: refusal.code)
        if refusal.code == .roomLimit { response.headers.append((name: "Retry-After", value: "60")) }
        return response
    }

    /// The wire's `error` as the answer's body, with the code's HTTP status.
    static func wireError(_ message: ServerMessage) -> HTTPResponse {
        guard case .error(let code, _, _, _, _) = message else { preconditionFailure("not an error") }
        var response = HTTPResponse(status: status(of: code), contentType: "application/json", body: WireCodec.encode(message))
        if code == .rateLimited { response.headers.append((name: "Retry-After", value: "1")) }
        return response
    }

    /// A refusal as the wire's `error`, with its HTTP status.
    package static func wireError(_ refusal: Refusal) -> HTTPResponse {
        wireError(.error(code: refusal.code, message: refusal.message, field: refusal.field, ref: nil))
    }

    /// `503` `unavailable` with `Retry-After`: the room's owner elsewhere could not be asked, or did not
    /// answer in time.
    package static func unavailable(_ message: String) -> HTTPResponse {
        var response = wireError(.error(code: .unavailable, message: message, field: nil, ref: nil))
        response.headers.append((name: "Retry-After", value: "1"))
        return response
    }

    static func unauthorized(_ message: String) -> HTTPResponse {
        var response = HTTPResponse(status: 401, contentType: "application/json",
                                    body: WireCodec.encode(.error(code: .forbidden, message: message, field: "token", ref: nil)))
        response.headers.append((name: "WWW-Authenticate", value: "Bearer realm=\"pomodoro\""))
        return response
    }
}
