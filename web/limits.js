// The limits the server checks, as it sends them in `welcome.limits` (docs/PROTOCOL.md): the page checks the
// same ones before it sends anything, so an operator's `--max-task-length` or `--min-focus` reaches the page
// without the page being changed. Before the first welcome the page uses the limits its last server sent
// (kept in storage), else these defaults, the server's own.

export const DEFAULT_LIMITS = Object.freeze({
  maxNameLength: 40,
  maxTaskLength: 200,
  minPasscodeLength: 4,
  maxPasscodeLength: 64,
  maxExtendSeconds: 3600,
  maxPhaseSeconds: 28800,
  minFocusSeconds: 60,
  maxSettingSeconds: 14400,
  maxLongBreakEvery: 12,
});

/** A server's limits over the defaults: a field that is missing or not a whole number ≥ 0 keeps its default. */
export function limitsFrom(sent) {
  const limits = { ...DEFAULT_LIMITS };
  if (sent && typeof sent === 'object') {
    for (const key of Object.keys(DEFAULT_LIMITS)) {
      const value = sent[key];
      if (Number.isInteger(value) && value >= 0) limits[key] = value;
    }
  }
  return Object.freeze(limits);
}

/** Limits kept as JSON text (storage), or the defaults when there are none or they do not parse. */
export function limitsFromText(text) {
  if (!text) return DEFAULT_LIMITS;
  try {
    return limitsFrom(JSON.parse(text));
  } catch {
    return DEFAULT_LIMITS;
  }
}

/** The lowest a phase length may be set to: focus has the server's floor, breaks one second. */
export function minSettingSeconds(limits, field) {
  return field === 'focus' ? Math.max(1, limits.minFocusSeconds) : 1;
}
