import Foundation
import Glibc

/// The controlling terminal in raw mode: keys arrive one by one, unechoed, with Ctrl-C and Ctrl-Z as
/// plain bytes (the view turns them into quit and suspend), and output is not post-processed.
///
/// The only file that touches termios. `restore()` puts back exactly the settings found at `enter()`.
final class RawTerminal {
    private var saved = termios()
    private(set) var isRaw = false
    let input: Int32
    let output: Int32

    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) != 0 }

    /// Switches the input terminal to raw mode; false when it is not a terminal.
    func enterRaw() -> Bool {
        guard tcgetattr(input, &saved) == 0 else { return false }
        var raw = saved
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else { return false }
        isRaw = true
        return true
    }

    /// Puts the terminal back as it was.
    func restore() {
        guard isRaw else { return }
        tcsetattr(input, TCSAFLUSH, &saved)
        isRaw = false
    }

    /// Columns and rows of the output terminal (80×24 when it cannot say).
    func size() -> (columns: Int, rows: Int) {
        var ws = winsize()
        if ioctl(output, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            return (Int(ws.ws_col), Int(ws.ws_row))
        }
        return (80, 24)
    }

    /// Writes all of `text`, retrying short writes and interruptions.
    func write(_ text: String) { Self.write(text, to: output) }

    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
        bytes.removeAll()
    }
}

/// Reads the terminal's input on its own thread and hands each chunk of bytes on.
enum KeyReader {
    static func start(fd: Int32 = STDIN_FILENO, _ deliver: @escaping @Sendable ([UInt8]) -> Void,
                      atEnd: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    deliver(Array(buffer[0..<n]))
                } else if n < 0 && (errno == EINTR || errno == EAGAIN) {
                    continue
                } else {
                    atEnd()
                    return
                }
            }
        }
        thread.name = "pomo-keys"
        thread.start()
    }
}
