import PomodoroProtocol

/// Why the hub turned a request down, as the WebSocket's `error` and the HTTP API's error body both say it.
package struct Refusal: Error, Equatable {
    package var code: ErrorCode
    package var message: String
    package var field: String?

    package init(code: ErrorCode, message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }
}
