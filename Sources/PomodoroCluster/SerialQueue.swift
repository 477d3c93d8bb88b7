import Dispatch
import PomodoroNet

/// A serial dispatch queue that can tell whether the caller runs on it: a `LoopThread`, so that state used
/// on the queue only is `LoopBound` to it and debug builds check every access is made there.
final class SerialQueue: LoopThread {
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: true)
    }

    var isOnServiceThread: Bool { DispatchQueue.getSpecific(key: key) == true }
}
