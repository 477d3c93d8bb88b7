/// The languages pomo speaks: the page's (web/i18n.js). English is the fallback.
public enum Language: String, CaseIterable, Sendable {
    case en
    case zhHans = "zh-Hans"
    case zhHant = "zh-Hant"
    case ko

    /// The language of the locale the environment names, by POSIX precedence: `LC_ALL`, then `LC_MESSAGES`,
    /// then `LANG` (the first that is set and not empty). `zh_TW`, `zh_HK`, `zh_MO` and an explicit Hant script
    /// read Traditional Chinese, any other Chinese Simplified; `C`, `POSIX` and languages pomo does not speak,
    /// English.
    public static func from(environment: [String: String]) -> Language {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        return locale.map(from(locale:)) ?? .en
    }

    /// The language of one locale name: `zh_CN.UTF-8`, `ko_KR`, `zh_TW.UTF-8@euro`, `zh-Hant`.
    public static func from(locale: String) -> Language {
        let name = locale.lowercased()
            .split(separator: ".").first.map(String.init) ?? ""
        let tag = (name.split(separator: "@").first.map(String.init) ?? "").replacingOccurrences(of: "-", with: "_")
        let parts = tag.split(separator: "_").map(String.init)
        switch parts.first {
        case "zh":
            let rest = Set(parts.dropFirst())
            return rest.isDisjoint(with: ["tw", "hk", "mo", "hant"]) ? .zhHans : .zhHant
        case "ko": return .ko
        default: return .en
        }
    }
}
