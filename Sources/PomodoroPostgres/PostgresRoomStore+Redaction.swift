import Foundation
import PomodoroStore

// Messages without the password.

extension PostgresRoomStore {
    /// `url` without its password, for messages: the password of a URL's user part or of a `password`
    /// parameter (`?password=…`, or `password=…` in a `key=value` string) becomes `***`.
    public static func redacted(_ url: String) -> String {
        guard let secret = password(in: url), !secret.isEmpty else { return url }
        return url.replacingOccurrences(of: secret, with: "***")
    }

    /// The password as it is written in `url`, if any.
    static func password(in url: String) -> String? {
        if let scheme = url.range(of: "://") {
            let rest = url[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                let secret = String(authority[authority.index(after: colon)..<at])
                if !secret.isEmpty { return secret }
            }
            if let query = url.firstIndex(of: "?") {
                for pair in url[url.index(after: query)...].split(separator: "&") where pair.hasPrefix("password=") {
                    return String(pair.dropFirst("password=".count))
                }
            }
            return nil
        }
        // key=value: the value may be quoted.
        guard let key = url.range(of: #"(^|\s)password\s*=\s*"#, options: .regularExpression) else { return nil }
        let rest = url[key.upperBound...]
        if rest.first == "'" {
            let body = rest.dropFirst()
            return String(body[..<(body.firstIndex(of: "'") ?? body.endIndex)])
        }
        return String(rest[..<(rest.firstIndex { $0 == " " } ?? rest.endIndex)])
    }
}

/// The one place a `PostgresError` becomes a `StoreError`, saying what was being done and where. Parameters
/// are not in PostgreSQL's messages; the password is taken out of the message in case libpq repeats the
/// URL, in its written and percent-decoded forms.
func withStoreError<T>(_ what: @autoclosure () -> String, hiding password: String?,
                       _ body: () throws(PostgresError) -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        var message = "\(what()): \(error)"
        for secret in [password, password?.removingPercentEncoding].compactMap({ $0 }) where !secret.isEmpty {
            message = message.replacingOccurrences(of: secret, with: "***")
        }
        throw StoreError(message, isTransient: error.isUnreachable, isFenced: error.code == PostgresError.fenced)
    }
}
