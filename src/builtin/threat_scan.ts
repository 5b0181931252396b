// Threat scanning of text that reaches the system prompt, and load-time
// sanitising of memory entries. Patterns, order and scopes are Hermes'
// (`tools/threat_patterns.py`) in Python's Unicode `re` semantics, over the
// first 65,536 code points, NFKC-normalised.

import {
  codePointLength,
  formatThousands,
  PYTHON_WHITESPACE_CLASS,
  sliceCodePoints,
} from "./memory_format.ts";

/**
 * Which pattern set a scan uses: `all` (core injection and exfiltration
 * patterns), `context` (adds role hijacking and C2 patterns), `strict` (adds
 * URL exfiltration, secret paths, config tampering and hard-coded secrets;
 * the set the memory store uses).
 */
export type ThreatScope = "all" | "context" | "strict";

/** The longest text a scan looks at, in characters; the rest is ignored. */
export const MAX_SCAN_CHARS = 65536;

/** The invisible characters a scan reports (zero-width, BOM, bidi controls), in reporting order. */
export const INVISIBLE_CHARS: readonly string[] = [
  ..."\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
];

// Pattern building blocks in Python's Unicode `re` semantics: `\w` (W) is a
// letter, digit or `_`; `\s` (S) is Python's whitespace set; `\b` (B) is a
// boundary between those word characters and anything else.
const W = String.raw`[\p{L}\p{N}_]`;
const S = `[${PYTHON_WHITESPACE_CLASS}]`;
const B = `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`;
// `(?:\w+\s+){0,8}`: up to eight filler words between key tokens.
const F = `(?:${W}+${S}+){0,8}`;
// `[^\n]{0,16}`: the bounded gap between CJK anchor tokens.
const CJK_GAP = "[^\\n]{0,16}";
// `[^\n]{0,512}` and `[^\n]{0,2048}`: the bounded gaps within one line.
const LINE_512 = "[^\\n]{0,512}";
const LINE_2048 = "[^\\n]{0,2048}";

// [id, scope, JavaScript source] in Hermes' `_PATTERNS` order (the order
// findings are reported in), each a transcription of the Python expression
// with \s, \w and \b replaced by the classes above.
const PATTERN_TABLE: readonly (readonly [string, ThreatScope, string])[] = [
  // Classic prompt injection.
  [
    "prompt_injection",
    "all",
    `ignore${S}+${F}(?:previous|all|above|prior)${S}+${F}instructions`,
  ],
  ["sys_prompt_override", "all", `system${S}+prompt${S}+override`],
  [
    "disregard_rules",
    "all",
    `disregard${S}+${F}(?:your|all|any)${S}+${F}(?:instructions|rules|guidelines)`,
  ],
  [
    "bypass_restrictions",
    "all",
    `act${S}+as${S}+(?:if|though)${S}+${F}you${S}+${F}(?:have${S}+no|don't${S}+have)${S}+${F}(?:restrictions|limits|rules)`,
  ],
  [
    "html_comment_injection",
    "all",
    `<!--[^>]{0,512}(?:ignore|override|system|secret|hidden)[^>]{0,512}-->`,
  ],
  [
    "hidden_div",
    "all",
    `<${S}*div${S}+style${S}*=${S}*["'][^>]{0,2048}display${S}*:${S}*none`,
  ],
  [
    "translate_execute",
    "all",
    `translate${S}+${LINE_512}${S}+into${S}+${LINE_512}${S}+and${S}+(?:execute|run|eval)`,
  ],
  ["deception_hide", "all", `do${S}+not${S}+${F}tell${S}+${F}the${S}+user`],
  // Role-play / identity hijack.
  ["role_hijack", "context", `you${S}+are${S}+${F}now${S}+(?:a|an|the)${S}+`],
  ["role_pretend", "context", `pretend${S}+${F}(?:you${S}+are|to${S}+be)${S}+`],
  [
    "leak_system_prompt",
    "context",
    `output${S}+${F}(?:system|initial)${S}+prompt`,
  ],
  [
    "remove_filters",
    "context",
    `(?:respond|answer|reply)${S}+without${S}+${F}(?:restrictions|limitations|filters|safety)`,
  ],
  [
    "fake_update",
    "context",
    `you${S}+have${S}+been${S}+${F}(?:updated|upgraded|patched)${S}+to`,
  ],
  ["identity_override", "context", `${B}name${S}+yourself${S}+${W}+`],
  // C2 / promptware.
  ["c2_node_registration", "context", `register${S}+(?:as${S}+)?a?${S}*node`],
  [
    "c2_heartbeat",
    "context",
    `(?:heartbeat|beacon|check[${PYTHON_WHITESPACE_CLASS}\\-]?in)${S}+(?:to|with)${S}+`,
  ],
  [
    "c2_task_pull",
    "context",
    `pull${S}+(?:down${S}+)?(?:new${S}+)?task(?:ing|s)?${B}`,
  ],
  ["c2_network_connect", "context", `connect${S}+to${S}+the${S}+network${B}`],
  [
    "forced_action",
    "context",
    `you${S}+must${S}+(?:${W}+${S}+){0,3}(?:register|connect|report|beacon)${B}`,
  ],
  [
    "anti_forensic_oneliner",
    "context",
    `only${S}+use${S}+one[${PYTHON_WHITESPACE_CLASS}\\-]?liners?${B}`,
  ],
  [
    "anti_forensic_disk",
    "context",
    `never${S}+${F}(?:create|write)${S}+${F}(?:script|file)${S}+${F}disk`,
  ],
  [
    "env_var_unset_agent",
    "context",
    `unset${S}+${W}*(?:claude|codex|hermes|agent|openai|anthropic)${W}*`,
  ],
  // Known C2 / red-team framework names.
  [
    "known_c2_framework",
    "context",
    `${B}(?:cobalt${S}*strike|sliver|havoc|mythic|metasploit|brainworm)${B}`,
  ],
  [
    "c2_explicit",
    "context",
    `${B}c2${S}+(?:server|channel|infrastructure|beacon)${B}`,
  ],
  ["c2_explicit_long", "context", `${B}command${S}+and${S}+control${B}`],
  // Exfiltration via curl/wget/cat with secrets.
  [
    "exfil_curl",
    "all",
    `curl${S}+${LINE_2048}\\$\\{?${W}*(?:key|token|secret|password|credential|api)`,
  ],
  [
    "exfil_wget",
    "all",
    `wget${S}+${LINE_2048}\\$\\{?${W}*(?:key|token|secret|password|credential|api)`,
  ],
  [
    "read_secrets",
    "all",
    `cat${S}+${LINE_2048}(?:\\.env|credentials|\\.netrc|\\.pgpass|\\.npmrc|\\.pypirc)`,
  ],
  [
    "send_to_url",
    "strict",
    `(?:send|post|upload|transmit)${S}+${LINE_2048}${S}+(?:to|at)${S}+https?://`,
  ],
  [
    "context_exfil",
    "strict",
    `(?:include|output|print|share)${S}+${F}(?:conversation|chat${S}+history|previous${S}+messages|full${S}+context|entire${S}+context)`,
  ],
  // Persistence / SSH backdoor.
  ["ssh_backdoor", "strict", `authorized_keys`],
  ["ssh_access", "strict", `\\$home/\\.ssh|~/\\.ssh`],
  ["hermes_env", "strict", `\\$home/\\.hermes/\\.env|~/\\.hermes/\\.env`],
  [
    "agent_config_mod",
    "strict",
    `(?:update|modify|edit|write|change|append|add${S}+to)${S}+${LINE_2048}(?:agents\\.md|claude\\.md|\\.cursorrules|\\.clinerules)`,
  ],
  [
    "hermes_config_mod",
    "strict",
    `(?:update|modify|edit|write|change|append|add${S}+to)${S}+${LINE_2048}\\.hermes/(?:config\\.yaml|soul\\.md)`,
  ],
  // Hard-coded secrets.
  [
    "hardcoded_secret",
    "strict",
    `(?:api[_-]?key|token|secret|password)${S}*[=:]${S}*["'][a-z0-9+/=_-]{20,}`,
  ],
  // Multilingual (CJK) injection / exfiltration.
  [
    "prompt_injection_cjk",
    "all",
    `(?:忽略|忽視|无视|無視|不要理会|不用理会)${CJK_GAP}(?:指令|指示|命令|要求|提示词|提示語|prompt)`,
  ],
  [
    "disregard_rules_cjk",
    "all",
    `(?:无视|無視|忽略|忽視|违反|違反|绕过|繞過|不遵守)${CJK_GAP}(?:规则|規則|规定|規定|限制|约束|約束|指示)`,
  ],
  [
    "deception_hide_cjk",
    "all",
    `(?:不要|不准|不得|别|請勿|请勿|千万别|千萬別)${CJK_GAP}(?:告诉|告訴|让|讓|使|告知)[^\\n]{0,6}用户`,
  ],
  [
    "send_to_url_cjk",
    "strict",
    `(?:发送|發送|上传|上傳|传送|傳送|发到|發到|上报|上報|post)${CJK_GAP}https?://`,
  ],
  [
    "context_exfil_cjk",
    "strict",
    `(?:对话历史|對話歷史|聊天记录|聊天記錄|聊天历史|完整上下文|全部上下文|对话记录|對話記錄|系统提示词|系統提示詞|历史消息)${CJK_GAP}(?:发送|發送|上传|上傳|传送|傳送|导出|導出|外发|外發|泄露|洩露|发给|發給)`,
  ],
  [
    "role_hijack_cjk",
    "context",
    `你现在(?:是|要扮演|要充当|就是)|你現在(?:是|要扮演|要充當|就是)`,
  ],
  [
    "remove_filters_cjk",
    "context",
    `(?:不受|无视|無視|忽略|绕过|繞過|关闭|關閉|禁用)${CJK_GAP}(?:限制|约束|約束|安全|过滤|過濾|审查|審查|防护|防護)`,
  ],
];

// A pattern whose expression is compiled the first time a scan needs it, so
// importing this module (every process and sandbox worker does) costs no
// regular-expression compilation. `scope`: the narrowest that includes it.
class ThreatPattern {
  #regexp: RegExp | undefined;
  constructor(
    readonly id: string,
    readonly scope: ThreatScope,
    readonly source: string,
  ) {
    Object.freeze(this);
  }
  get regexp(): RegExp {
    return this.#regexp ??= new RegExp(this.source, "iu");
  }
}

/** Every threat pattern, in Hermes' (reporting) order. */
export const THREAT_PATTERNS: readonly ThreatPattern[] = Object.freeze(
  PATTERN_TABLE.map(([id, scope, source]) =>
    new ThreatPattern(id, scope, source)
  ),
);

const SCOPE_RANK: Readonly<Record<ThreatScope, number>> = {
  all: 0,
  context: 1,
  strict: 2,
};

/**
 * Folds text the way Python's `re.IGNORECASE` compares it, where JavaScript's
 * `/iu` differs: Python lowercases each character with the simple mapping
 * (`İ` U+0130 → `i`) and treats `ı` (U+0131) as `i` and `ſ` (U+017F) as
 * `s`. Lowercasing keeps every character's class (letter, digit, space) and
 * the code-point count, so only letter-to-letter matches change.
 */
function pythonCaseFold(text: string): string {
  let folded = text.includes("\u0130") ? text.replaceAll("\u0130", "i") : text;
  folded = folded.toLowerCase();
  return /[\u0131\u017f]/.test(folded)
    ? folded.replace(/[\u0131\u017f]/g, (c) => c === "\u0131" ? "i" : "s")
    : folded;
}

// The text patterns run on: the first MAX_SCAN_CHARS code points (`raw`,
// also checked for invisible characters) in NFKC, case-folded.
function scanText(text: string): { raw: string; folded: string } {
  const raw = text.length > MAX_SCAN_CHARS
    ? sliceCodePoints(text, 0, MAX_SCAN_CHARS)
    : text;
  return { raw, folded: pythonCaseFold(raw.normalize("NFKC")) };
}

const INVISIBLE_PREFIX = "invisible_unicode_";

/** Options of {@linkcode scanForThreats}. */
interface ScanOptions {
  /** Which pattern set to use (default `"strict"`). */
  scope?: ThreatScope;
}

/**
 * The ids of every finding in text: `invisible_unicode_U+XXXX` per invisible
 * character present, then each matching pattern, in table order.
 */
export function scanForThreats(
  text: string,
  options: ScanOptions = {},
): string[] {
  const rank = scopeRank(options.scope);
  if (text === "") return [];
  const { raw, folded } = scanText(text);
  const findings: string[] = [];
  for (const ch of INVISIBLE_CHARS) {
    if (raw.includes(ch)) {
      findings.push(`${INVISIBLE_PREFIX}${unicodeLabel(ch)}`);
    }
  }
  for (const p of THREAT_PATTERNS) {
    if (SCOPE_RANK[p.scope] <= rank && p.regexp.test(folded)) {
      findings.push(p.id);
    }
  }
  return findings;
}

/**
 * The message that blocks text at a scope, or `null` when it is clean
 * (Hermes' `first_threat_message`: invisible characters first).
 *
 * @throws {RangeError} When the scope is not `all`, `context` or `strict`.
 */
export function firstThreatMessage(
  text: string,
  options: ScanOptions = {},
): string | null {
  const first = scanForThreats(text, options)[0];
  if (first === undefined) return null;
  return first.startsWith(INVISIBLE_PREFIX)
    ? `Blocked: content contains invisible unicode character ${
      first.slice(INVISIBLE_PREFIX.length)
    } (possible injection).`
    : `Blocked: content matches threat pattern '${first}'. Content is injected into the system prompt and must not contain injection or exfiltration payloads.`;
}

/** The message that blocks content about to be written to memory (strict scope), or `null`. */
export function scanMemoryContent(content: string): string | null {
  return firstThreatMessage(content, { scope: "strict" });
}

function scopeRank(scope: ThreatScope | undefined): number {
  const key = scope ?? "strict";
  const rank = Object.hasOwn(SCOPE_RANK, key) ? SCOPE_RANK[key] : undefined;
  if (rank === undefined) {
    throw new RangeError(
      `Cannot scan for threats as 'scope' must be all, context or strict: current value is ${
        String(scope)
      }`,
    );
  }
  return rank;
}

/**
 * Replaces a poisoned memory entry with a `[BLOCKED: …]` placeholder for the
 * system prompt (the file is untouched); an entry too large to scan is
 * blocked too.
 */
export function sanitizeMemoryEntry(entry: string, fileName: string): string {
  if (entry === "" || entry.startsWith("[BLOCKED:")) return entry;
  const length = codePointLength(entry);
  if (length > MAX_SCAN_CHARS) {
    return `[BLOCKED: ${fileName} entry too large to scan (${
      formatThousands(length)
    } chars). Removed from system prompt; use memory(action=remove) to delete the original.]`;
  }
  const findings = scanForThreats(entry, { scope: "strict" });
  if (findings.length === 0) return entry;
  return `[BLOCKED: ${fileName} entry contained threat pattern(s): ${
    findings.join(", ")
  }. Removed from system prompt; use memory(action=remove) to delete the original.]`;
}

function unicodeLabel(ch: string): string {
  return `U+${
    (ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")
  }`;
}
