// What PyYAML's `safe_load` refuses, or reads differently, in a document the
// `yaml` package has already parsed with the PyYAML schema (yaml_schema.ts),
// and the conversion of the parsed document to the plain data Hermes' Python
// code sees. Nodes are recognised by the package's global `Symbol.for`
// identities, so this file imports nothing from the package at run time.
import type { Document } from "npm:yaml@^2.9.1";

const NODE_TYPE = Symbol.for("yaml.node.type");
const ALIAS = Symbol.for("yaml.alias");
const MAP = Symbol.for("yaml.map");
const PAIR = Symbol.for("yaml.pair");
const SCALAR = Symbol.for("yaml.scalar");
const SEQ = Symbol.for("yaml.seq");

/** A place in the source and what is wrong there. */
export interface YamlProblem {
  /** What PyYAML reports, in words (no file content). */
  message: string;
  /** The offset in the source text. */
  offset: number;
}

interface AnyNode {
  [NODE_TYPE]?: symbol;
  items?: AnyNode[];
  key?: AnyNode | null;
  value?: unknown;
  anchor?: string;
  source?: string;
  type?: string;
  range?: [number, number, number];
}

function kind(node: unknown): symbol | undefined {
  return node !== null && typeof node === "object"
    ? (node as AnyNode)[NODE_TYPE]
    : undefined;
}

/**
 * The first construct the `yaml` package accepts but PyYAML's `safe_load`
 * raises on: an alias before its anchor, a collection as a key, `<<` as a
 * value, or a tab where PyYAML scans for a token.
 */
export function pythonYamlProblem(
  doc: Document,
  text: string,
): YamlProblem | undefined {
  const anchors = new Set<string>();
  const allowedTabs: [number, number][] = [];
  let problem: YamlProblem | undefined;
  const walk = (node: unknown, isKey: boolean): void => {
    if (problem !== undefined || node === null || typeof node !== "object") {
      return;
    }
    const n = node as AnyNode;
    const type = kind(n);
    if (type === ALIAS) {
      if (!anchors.has(n.source ?? "")) {
        problem = {
          message:
            `found undefined alias '${n.source}' (an alias must come after its anchor)`,
          offset: n.range?.[0] ?? 0,
        };
      }
      return;
    }
    if (n.anchor) anchors.add(n.anchor);
    if (type === SCALAR) {
      if (n.type !== "PLAIN" && n.range) {
        allowedTabs.push([n.range[0], n.range[1]]);
      }
      if (!isKey && n.type === "PLAIN" && n.source === "<<") {
        problem = {
          message:
            "could not determine a constructor for the tag 'tag:yaml.org,2002:merge' ('<<' is only a merge key; quote it to use it as text)",
          offset: n.range?.[0] ?? 0,
        };
      }
      return;
    }
    if (type === PAIR) {
      const key = n.key;
      if (kind(key) === MAP || kind(key) === SEQ) {
        problem = {
          message: "found unhashable key (a mapping or list cannot be a key)",
          offset: key?.range?.[0] ?? 0,
        };
        return;
      }
      walk(key, true);
      walk(n.value, false);
      return;
    }
    for (const item of n.items ?? []) walk(item, false);
  };
  walk(doc.contents, false);
  return problem ?? tabProblem(text, allowedTabs);
}

// PyYAML skips only spaces between tokens, so a tab anywhere outside a
// quoted or block scalar and outside a comment raises "found character
// '\t' that cannot start any token".
function tabProblem(
  text: string,
  allowed: [number, number][],
): YamlProblem | undefined {
  let from = 0;
  for (;;) {
    const tab = text.indexOf("\t", from);
    if (tab < 0) return undefined;
    from = tab + 1;
    if (allowed.some(([start, end]) => tab >= start && tab < end)) continue;
    const lineStart = text.lastIndexOf("\n", tab) + 1;
    if (inComment(text.slice(lineStart, tab), lineStart, allowed)) continue;
    return {
      message:
        "found character '\\t' that cannot start any token (indent and separate with spaces)",
      offset: tab,
    };
  }
}

// Whether a `#` that starts a comment precedes this point on its line.
function inComment(
  before: string,
  base: number,
  allowed: [number, number][],
): boolean {
  for (let i = 0; i < before.length; i++) {
    if (before[i] !== "#") continue;
    const at = base + i;
    if (allowed.some(([start, end]) => at >= start && at < end)) continue;
    if (i === 0 || before[i - 1] === " " || before[i - 1] === "\t") {
      return true;
    }
  }
  return false;
}

/** The 1-based line and column of an offset. */
export function lineColumn(
  text: string,
  offset: number,
): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

/**
 * The document as the plain data Hermes' Python code sees: keys as Python's
 * `str()` writes them, timestamps as `Date`, `!!set` as `Set`.
 */
export function pythonYamlToJS(doc: Document): unknown {
  return plain(doc.toJS({ mapAsMap: true }));
}

function plain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value) out[keyText(key)] = plain(item);
    return out;
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Set) return new Set([...value].map(plain));
  // `!!binary` comes back as a Node.js Buffer: hand out plain bytes.
  if (value instanceof Uint8Array && value.constructor !== Uint8Array) {
    return new Uint8Array(value);
  }
  return value;
}

function keyText(key: unknown): string {
  if (typeof key === "string") return key;
  if (key === null || key === undefined) return "null";
  if (key instanceof Date) {
    return key.toISOString().replace(/T00:00:00\.000Z$/, "");
  }
  return String(key);
}
