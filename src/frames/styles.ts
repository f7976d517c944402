// APPLY_SETTINGS (docs/frames.md §3.4): the parent may restyle the element that shows or takes
// the secret, with a fixed set of CSS properties whose values each match a pattern — nothing that
// loads a resource (url(), @import) or escapes a declaration can pass. Pure, so it is unit-tested
// in Node; the frames apply the result through the CSSOM (allowed by the page's style-src 'self').

const LENGTH = "\\d+(?:\\.\\d+)?(?:px|em|rem|%|vh|vw|pt|ch)";
const COLOR =
  "(?:transparent|inherit|initial|currentcolor|#[0-9a-fA-F]{3,8}|rgba?\\(\\s*\\d{1,3}\\s*,\\s*\\d{1,3}\\s*,\\s*\\d{1,3}\\s*(?:,\\s*(?:0|1|0?\\.\\d{1,3})\\s*)?\\))";
const BOX = `(?:0|${LENGTH})(?: (?:0|${LENGTH})){0,3}`;

const PATTERNS: Record<string, RegExp> = {
  fontSize: new RegExp(`^${LENGTH}$`),
  fontWeight: /^(?:normal|bold|bolder|lighter|[1-9]00)$/,
  // A family list: names of letters, digits, spaces, hyphens, commas and single quotes only.
  fontFamily: /^[A-Za-z0-9 ,'-]{1,200}$/,
  lineHeight: new RegExp(`^(?:normal|\\d+(?:\\.\\d+)?|${LENGTH})$`),
  color: new RegExp(`^${COLOR}$`),
  labelColor: new RegExp(`^${COLOR}$`),
  backgroundColor: new RegExp(`^${COLOR}$`),
  borderColor: new RegExp(`^${COLOR}$`),
  borderStyle: /^(?:none|solid|dashed|dotted|double)$/,
  borderWidth: new RegExp(`^${BOX}$`),
  borderRadius: new RegExp(`^${BOX}$`),
  padding: new RegExp(`^${BOX}$`),
  margin: new RegExp(`^${BOX}$`),
  width: new RegExp(`^(?:auto|${LENGTH})$`),
  height: new RegExp(`^(?:auto|${LENGTH})$`),
  maxWidth: new RegExp(`^(?:none|${LENGTH})$`),
  maxHeight: new RegExp(`^(?:none|${LENGTH})$`),
  textAlign: /^(?:left|right|center|justify)$/,
  overflowWrap: /^(?:normal|break-word|anywhere)$/,
  wordWrap: /^(?:normal|break-word)$/,
  resize: /^(?:none|both|horizontal|vertical)$/,
};

/** The most properties one APPLY_SETTINGS may name (there are fewer allowed ones). */
const MAX_PROPERTIES = 64;

/**
 * The styles of an APPLY_SETTINGS value (its JSON text `{"styles": {...}}`), every property
 * allowed and every value matching; throws naming the first one that is not. Properties are
 * copied onto a null-prototype object, so a name such as `__proto__` is only refused.
 */
export function parseSettings(value: unknown): Record<string, string> {
  if (typeof value !== "string") throw new Error("APPLY_SETTINGS: the value must be a JSON string");
  if (value.length > 16_384) throw new Error("APPLY_SETTINGS: the settings are too long");
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error("APPLY_SETTINGS: the value is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error("APPLY_SETTINGS: the settings must be an object");
  const styles = (parsed as { styles?: unknown }).styles;
  const out = Object.create(null) as Record<string, string>;
  if (styles === undefined) return out;
  if (typeof styles !== "object" || styles === null || Array.isArray(styles)) throw new Error("APPLY_SETTINGS: styles must be an object");
  const entries = Object.entries(styles);
  if (entries.length > MAX_PROPERTIES) throw new Error("APPLY_SETTINGS: too many style properties");
  for (const [name, raw] of entries) {
    const pattern = Object.hasOwn(PATTERNS, name) ? PATTERNS[name] : undefined;
    if (!pattern) throw new Error(`APPLY_SETTINGS: unsupported style property ${JSON.stringify(name.slice(0, 40))}`);
    const v = typeof raw === "string" ? raw.trim() : "";
    if (v.length > 200 || !pattern.test(v)) throw new Error(`APPLY_SETTINGS: invalid value for ${name}`);
    out[name] = v;
  }
  return out;
}
