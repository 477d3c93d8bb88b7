/// A count with its noun in English, as the command-line tools report what a database holds: "1 room",
/// "2 rooms", "0 focus sessions"; `plural` for a noun that does not take an "s" ("deliveries").
public func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}
