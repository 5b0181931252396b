// Egress redaction: every value handed to a memory provider passes through
// here; a secret found anywhere in one hand-off is masked everywhere in it.

import { isPlainObject } from "../_util/is_record.ts";
import { words } from "../_util/python_text.ts";

/** The text every masked secret becomes. */
export const REDACTED = "[redacted]";
// A value cut from an already masked text (a bare run may stop before "]").
const REDACTED_STEM = "[redacted";

// Learned secrets shorter than this are not propagated across the hand-off
// (masking every "ab" in a transcript would destroy it).
const MIN_LEARNED_LENGTH = 6;

// PEM private key blocks (unterminated: to the end of the text).
const PEM_REGEXP =
  /-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|$)/g;

// Vendor-prefixed keys and JWTs, starting a word: [prefix, rest] pairs (the
// prefixes alone make the pre-check below).
const PREFIXED_TOKENS: [string, string][] = [
  ["sk-", String.raw`(?:[A-Za-z0-9_-]|\.(?=[A-Za-z0-9_-])){10,}`],
  ["(?:sk|rk|pk)_(?:live|test)_", "[A-Za-z0-9]{10,}"],
  ["sk_", "[A-Za-z0-9]{24,}"],
  ["gh[pousr]_", "[A-Za-z0-9]{10,}"],
  ["github_pat_", "[A-Za-z0-9_]{10,}"],
  ["xox[abposr]-", "[A-Za-z0-9-]{10,}"],
  ["xapp-", String.raw`\d+-[A-Za-z0-9-]{10,}`],
  ["(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIPA)", "[A-Z0-9]{16}(?![A-Za-z0-9])"],
  ["AIza", "[A-Za-z0-9_-]{30,}"],
  ["gl(?:pat|oas|dt|rt|rtr|cbt|ptt|ft|imt|soat|wt)-", "[A-Za-z0-9_.-]{10,}"],
  ["hf_", "[A-Za-z0-9]{10,}"],
  ["npm_", "[A-Za-z0-9]{20,}"],
  ["pypi-", "[A-Za-z0-9_-]{20,}"],
  [String.raw`SG\.`, String.raw`[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`],
  ["(?:xai|pplx|tvly|hsk|fw)-", "[A-Za-z0-9]{16,}"],
  [
    "(?:gsk|r8|fal|exa|ntn|brv|mem0|dop_v1|doo_v1|shpat|lin_api)_",
    "[A-Za-z0-9]{16,}",
  ],
  ["eyJ", String.raw`[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`],
];
const PREFIXED_TOKEN_REGEXP = new RegExp(
  String.raw`\b(?:${PREFIXED_TOKENS.map(([p, rest]) => p + rest).join("|")})`,
  "g",
);

// The pre-check, one regexp pass (about 0.3–0.5 µs per 100 characters of
// prose): a text with no match holds nothing the rules below mask, so it must
// match wherever a rule could (a superset, case-blind): a PEM head, "bearer ",
// URL userinfo, `:`/`=` after a key holding a word `classifyKey` rates, a
// token prefix at a word start.
const SECRET_SHAPED_REGEXP = new RegExp(
  String.raw`PRIVATE KEY|\bbearer\s|:\/\/[^\s/?#@"'<>]*@|[:=](?<=(?:${
    words`pass pwd secret token key credential auth jwt sig session cookie salt`
      .join("|")
  })[A-Za-z0-9_.-]*["']?\s*[:=])|\b(?:${
    PREFIXED_TOKENS.map(([p]) => p).join("|")
  })`,
  "i",
);
// Texts found clean: the last one (a turn's user text reaches several hooks),
// and object fields lately, up to about 4 M characters (a transcript's
// messages come back on every turn; a set that keeps every new text would
// cost a fresh turn more than it saves).
let lastClean = "";
const cleanFields = new Set<string>();
let cleanChars = 0;

// URL userinfo: scheme, user and `:`, then the password before `@`.
const URL_CREDENTIALS_REGEXP =
  /\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/[^\s/?#@:"'<>]*:)([^\s/?#@"'<>]+)(?=@)/g;

// An Authorization header (any case): head with optional scheme, then value.
const AUTHORIZATION_REGEXP =
  /\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate)\s+)?)([^\s"',;]+)/gi;

// A bearer token anywhere (any case); the value may not end in a full stop.
const BEARER_REGEXP = /\b(bearer\s+)([A-Za-z0-9._~+/=-]*[A-Za-z0-9_~+/=-])/gi;

// The value after `key <sep>` in an assignment: quoted, or a bare run.
// The bare run may contain punctuation (passwords do) but not end with it.
const ASSIGN_VALUE_REGEXP =
  /"([^"\n]{1,4096})"|'([^'\n]{1,4096})'|([^\s"'<>`]*[^\s"'<>`,;.:)\]}])/y;
// In a query string (`?key=…&…`) the value ends at `&` or `#`.
const QUERY_VALUE_REGEXP = /([^\s"'<>`&#]+)/y;

const SEPARATOR_REGEXP = /[:=]/g;

// `data:` URLs embedded in text; their payload is never touched.
const DATA_URL_REGEXP =
  /data:[A-Za-z0-9.+/-]*(?:;[A-Za-z0-9.+=-]*)*,[A-Za-z0-9+/=%_.~-]*/g;

const STRONG_LAST_SEGMENTS = new Set(words`
  password passwd passphrase pwd pass secret token apikey credential
  credentials auth jwt privatekey accesskey secretkey authorization
`);
const STRONG_SUFFIXES = ["password", "passwd", "secret", "token", "apikey"];
const KEY_QUALIFIERS = new Set(words`
  api access private secret signing encryption master client service app auth
  account session license admin deploy ssh webhook bot
`);
const WEAK_LAST_SEGMENTS = new Set(words`
  key sig signature session sessionid cookie salt
`);
const NON_SECRET_VALUES = new Set(words`
  true false null none nil undefined yes no on off required optional string
  str bearer basic
`);

// 0: not a secret name, 1: weak (only long token-like values), 2: strong.
type KeyStrength = 0 | 1 | 2;
type Strength = { strength: KeyStrength; segments: number };
const keyCache = new Map<string, Strength>();

function classifyKey(key: string): Strength {
  const cached = keyCache.get(key);
  if (cached !== undefined) return cached;
  const segments = key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()
    .split(/[_.-]+/).filter((s) => s !== "");
  const last = segments[segments.length - 1] ?? "";
  const prev = segments[segments.length - 2] ?? "";
  let strength: KeyStrength = 0;
  if (
    STRONG_LAST_SEGMENTS.has(last) ||
    (last === "key" && KEY_QUALIFIERS.has(prev)) ||
    STRONG_SUFFIXES.some((s) => last.endsWith(s) && last !== "tokens")
  ) {
    strength = 2;
  } else if (WEAK_LAST_SEGMENTS.has(last)) {
    strength = 1;
  }
  const result: Strength = { strength, segments: segments.length };
  if (keyCache.size > 4096) keyCache.clear();
  keyCache.set(key, result);
  return result;
}

function isPlaceholder(value: string): boolean {
  if (value.startsWith(REDACTED_STEM)) return true;
  const first = value[0];
  if (first === "$" || first === "%" || first === "<" || first === "{") {
    return true;
  }
  if (/^(?:process\.env|os\.environ|os\.getenv|env\()/.test(value)) return true;
  if (/^[*xX.•]+$/.test(value) || value.endsWith("(")) return true;
  return NON_SECRET_VALUES.has(value.toLowerCase());
}

/** A long hex/base64-ish run: what a weak key name needs to be masked. */
function looksLikeToken(value: string): boolean {
  if (!/^[A-Za-z0-9+/=_.~-]+$/.test(value)) return false;
  if (value.length >= 32) return true;
  return value.length >= 16 && /[0-9]/.test(value) && /[A-Za-z]/.test(value);
}

/** Bearer values: long, or with a digit, symbol or inner capital. */
function looksLikeBearer(value: string): boolean {
  return value.length >= 20 || /[0-9._~+/=-]/.test(value) ||
    /.[A-Z]/.test(value);
}

/** Per-hand-off state: the secrets masked so far. */
class RedactionContext {
  learned: Set<string> | undefined = undefined;

  learn(secret: string): void {
    if (secret.length < MIN_LEARNED_LENGTH || secret.includes(REDACTED_STEM)) {
      return;
    }
    (this.learned ??= new Set()).add(secret);
  }
}

function isKeyChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) ||
    (code >= 48 && code <= 57) || code === 95 || code === 46 || code === 45;
}

function isKeyStart(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) ||
    code === 95;
}

function isBlank(code: number): boolean {
  return code === 32 || code === 9;
}

/**
 * Masks the values of `key <sep> value` assignments whose key names a secret.
 * Scans from each `:`/`=` instead of trying a key at every word (much faster
 * on prose).
 */
function scrubAssignments(text: string, ctx: RedactionContext): string {
  let out = "";
  let copied = 0;
  SEPARATOR_REGEXP.lastIndex = 0;
  let sep: RegExpExecArray | null;
  while ((sep = SEPARATOR_REGEXP.exec(text)) !== null) {
    const at = sep.index;
    // Key: [quote] name [quote] then up to 3 blanks before the separator.
    let keyEnd = at;
    for (let n = 0; n < 3 && isBlank(text.charCodeAt(keyEnd - 1)); n++) {
      keyEnd--;
    }
    let keyQuote = "";
    const closing = text[keyEnd - 1];
    if (closing === '"' || closing === "'") {
      keyQuote = closing;
      keyEnd--;
    }
    let keyStart = keyEnd;
    while (
      keyStart > copied && keyEnd - keyStart <= 81 &&
      isKeyChar(text.charCodeAt(keyStart - 1))
    ) {
      keyStart--;
    }
    if (keyEnd - keyStart > 81) continue;
    while (keyStart < keyEnd && text.charCodeAt(keyStart) === 45) keyStart++;
    if (keyStart >= keyEnd || !isKeyStart(text.charCodeAt(keyStart))) continue;
    if (keyQuote !== "" && text[keyStart - 1] !== keyQuote) continue;
    const key = text.slice(keyStart, keyEnd);
    const { strength, segments } = classifyKey(key);
    if (strength === 0) continue;
    // Value: up to 3 blanks after the separator, then quoted or bare.
    let valueAt = at + 1;
    for (let n = 0; n < 3 && isBlank(text.charCodeAt(valueAt)); n++) valueAt++;
    const before = text[keyStart - 1];
    let whole: string, doubleQuoted: string | undefined;
    let singleQuoted: string | undefined, bare: string | undefined;
    if ((before === "?" || before === "&") && keyQuote === "") {
      QUERY_VALUE_REGEXP.lastIndex = valueAt;
      const found = QUERY_VALUE_REGEXP.exec(text);
      if (found === null) continue;
      [whole, bare] = found;
    } else {
      ASSIGN_VALUE_REGEXP.lastIndex = valueAt;
      const found = ASSIGN_VALUE_REGEXP.exec(text);
      if (found === null) continue;
      [whole, doubleQuoted, singleQuoted, bare] = found;
    }
    const value = doubleQuoted ?? singleQuoted ?? bare ?? "";
    if (value === "" || isPlaceholder(value)) continue;
    if (strength === 1) {
      if (!looksLikeToken(value)) continue;
    } else if (
      bare !== undefined && keyQuote === "" && segments === 1 &&
      sep[0] === ":" && /^[A-Za-z]{1,15}$/.test(value)
    ) {
      // "Token: the …" in prose: a plain word after a bare one-word key.
      continue;
    }
    ctx.learn(value);
    const quote = doubleQuoted !== undefined
      ? '"'
      : singleQuoted !== undefined
      ? "'"
      : "";
    out += text.slice(copied, valueAt) + quote + REDACTED + quote;
    copied = valueAt + whole.length;
    SEPARATOR_REGEXP.lastIndex = copied;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

// A replacer of `(head)(value)` matches: `head[redacted]`, the value learned, unless `keep`.
function maskValue(
  ctx: RedactionContext,
  keep: (value: string, head: string) => boolean,
): (match: string, head: string, value: string) => string {
  return (match, head, value) => {
    if (keep(value, head)) return match;
    ctx.learn(value);
    return `${head}${REDACTED}`;
  };
}

function scrubSegment(text: string, ctx: RedactionContext): string {
  let out = text;
  if (out.includes("PRIVATE KEY")) out = out.replace(PEM_REGEXP, REDACTED);
  out = out.replace(PREFIXED_TOKEN_REGEXP, (token: string): string => {
    ctx.learn(token);
    return REDACTED;
  });
  out = out.replace(
    URL_CREDENTIALS_REGEXP,
    maskValue(ctx, (password) => password.startsWith(REDACTED_STEM)),
  );
  out = out.replace(AUTHORIZATION_REGEXP, maskValue(ctx, isPlaceholder));
  out = out.replace(
    BEARER_REGEXP,
    maskValue(ctx, (value, head) =>
      value.length < 8 || isPlaceholder(value) ||
      // "Bearer <token>" as a header writes it; prose needs a token shape.
      (!head.startsWith("Bearer") && !looksLikeBearer(value))),
  );
  if (out.includes(":") || out.includes("=")) out = scrubAssignments(out, ctx);
  return out;
}

// Applies `scrub` around the embedded data: URLs, which are kept byte-identical.
function outsideDataUrls(
  text: string,
  scrub: (part: string) => string,
): string {
  if (text === "" || text.startsWith("data:")) return text;
  if (!text.includes("data:")) return scrub(text);
  let out = "";
  let last = 0;
  for (const m of text.matchAll(DATA_URL_REGEXP)) {
    out += scrub(text.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + scrub(text.slice(last));
}

function scrubString(
  text: string,
  ctx: RedactionContext,
  field = false,
): string {
  if (text === lastClean || (field && cleanFields.has(text))) return text;
  if (!SECRET_SHAPED_REGEXP.test(text)) {
    if (!field) return lastClean = text;
    if (cleanChars > 1 << 22) {
      cleanFields.clear();
      cleanChars = 0;
    }
    cleanChars += text.length;
    cleanFields.add(text);
    return text;
  }
  return outsideDataUrls(text, (part) => scrubSegment(part, ctx));
}

function copyScrubbed(
  value: unknown,
  ctx: RedactionContext,
  seen: Map<object, unknown> | undefined,
): unknown {
  if (typeof value === "string") return scrubString(value, ctx);
  if (value === null || typeof value !== "object") return value;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return value;
  const memo = seen ?? new Map<object, unknown>();
  const done = memo.get(value);
  if (done !== undefined) return done;
  if (isArray) {
    const out: unknown[] = new Array(value.length);
    memo.set(value, out);
    for (let i = 0; i < value.length; i++) {
      out[i] = copyScrubbed(value[i], ctx, memo);
    }
    return out;
  }
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = Object.getPrototypeOf(value) === null
    ? Object.create(null)
    : {};
  memo.set(value, out);
  for (const key of Object.keys(source)) {
    const field = source[key];
    out[key] = typeof field === "string"
      ? scrubString(field, ctx, true)
      : copyScrubbed(field, ctx, memo);
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function learnedPattern(learned: Set<string>): RegExp {
  const tokens = [...learned].sort((a, b) => b.length - a.length);
  return new RegExp(tokens.map(escapeRegExp).join("|"), "g");
}

function maskLearnedString(text: string, pattern: RegExp): string {
  return outsideDataUrls(text, (part) => part.replace(pattern, REDACTED));
}

// Second pass over our own copy: mask the learned secrets everywhere.
function maskLearned(
  value: unknown,
  pattern: RegExp,
  seen: Set<object>,
): unknown {
  if (typeof value === "string") return maskLearnedString(value, pattern);
  if (value === null || typeof value !== "object" || seen.has(value)) {
    return value;
  }
  if (Array.isArray(value)) {
    seen.add(value);
    for (let i = 0; i < value.length; i++) {
      value[i] = maskLearned(value[i], pattern, seen);
    }
  } else if (isPlainObject(value)) {
    seen.add(value);
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      record[key] = maskLearned(record[key], pattern, seen);
    }
  }
  return value;
}

/**
 * Returns a copy of `value` with every secret in every string masked as
 * `[redacted]`; plain objects and arrays are copied deeply, other objects,
 * keys and `data:` URLs are kept. A secret masked anywhere in `value` is
 * masked everywhere in it, so hand related values over together
 * (`[user, assistant, messages]`). `value` is never mutated.
 *
 * @category Context safety
 */
export function redactForEgress<T>(value: T): T {
  const ctx = new RedactionContext();
  const copy = copyScrubbed(value, ctx, undefined);
  if (ctx.learned === undefined) return copy as T;
  return maskLearned(copy, learnedPattern(ctx.learned), new Set()) as T;
}

/**
 * Masks every secret in one string (see {@linkcode redactForEgress}). A secret
 * found once is masked at every place it appears in `text`.
 */
export function redactText(text: string): string {
  if (typeof text !== "string") return text;
  // One turn redacts the same user text several times (turn start, prefetch,
  // queued prefetch); the result depends on the text alone.
  if (text === lastText) return lastRedacted;
  lastRedacted = redactForEgress(text);
  lastText = text;
  return lastRedacted;
}

let lastText = "";
let lastRedacted = "";
