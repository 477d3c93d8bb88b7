import PomodoroProtocol

/// Why the hub turned a request down, as the WebSocket's `error` and the HTTP API's error body both say it.
struct Refusal: Error, Equatable {
    var code: ErrorCode
    var message: String
    var field: String?
}
