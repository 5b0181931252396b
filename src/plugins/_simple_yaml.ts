// A fast path for the YAML that plugin.yaml files are made of: top-level
// `key: scalar`, `key: [flow, list]`, and one level of block list or
// mapping. Parsing hundreds of small manifests with the full YAML library
// dominated discovery time; this subset parser gives the same values for
// that shape and answers `undefined` (use the real parser) for anything
// else: comments after values, numbers, nulls, anchors, escapes, tabs,
// duplicate keys, deeper nesting.

type Value = string | boolean | Value[] | { [key: string]: Value };

const KEY_REGEXP = /^([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+(.*))?$/;
const NESTED_KEY_REGEXP = /^([ ]+)([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+(.*))?$/;
const ITEM_REGEXP = /^([ ]+)-[ ]+(.*)$/;

function scalar(text: string): string | boolean | undefined {
  const value = text.trim();
  if (value === "") return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  const quoted = /^"([^"\\]*)"$|^'([^']*)'$/.exec(value);
  if (quoted) return quoted[1] ?? quoted[2];
  if (/^[-+.]?\d/.test(value)) return undefined;
  if (
    /^(?:null|Null|NULL|~|true|True|TRUE|false|False|FALSE|yes|no|on|off)$/i
      .test(value)
  ) {
    return undefined;
  }
  if (/^[&*!|>%@`{}[\],?:#'".=<-]/.test(value)) return undefined;
  if (value.includes(": ") || value.includes(" #") || value.endsWith(":")) {
    return undefined;
  }
  return value;
}

/** Every text as a scalar, or `undefined` when one is not. */
function scalars(texts: readonly string[]): Value[] | undefined {
  const items = texts.map(scalar);
  return items.includes(undefined) ? undefined : items as Value[];
}

function valueOf(text: string): Value | undefined {
  const value = text.trim();
  if (value.startsWith("[")) {
    if (!value.endsWith("]")) return undefined;
    const inner = value.slice(1, -1).trim();
    if (inner === "") return [];
    if (/[[\]{}]/.test(inner)) return undefined;
    return scalars(inner.split(","));
  }
  return scalar(value);
}

/**
 * Parses the plugin.yaml subset, or returns `undefined` when the text is
 * outside it (the caller then uses the full YAML parser).
 */
export function parseSimpleYaml(
  text: string,
): Record<string, Value> | undefined {
  if (text.includes("\t")) return undefined;
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""))
    .filter((line) => line.trim() !== "" && !/^\s*#/.test(line));
  if (lines.some((line) => line.includes("#"))) return undefined;
  const result: Record<string, Value> = {};
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    const top = KEY_REGEXP.exec(line);
    if (!top) return undefined;
    const key = top[1] as string;
    if (Object.hasOwn(result, key)) return undefined;
    i++;
    if (top[2] !== undefined && top[2].trim() !== "") {
      const value = valueOf(top[2]);
      if (value === undefined) return undefined;
      result[key] = value;
      continue;
    }
    const block: string[] = [];
    while (i < lines.length && (lines[i] as string).startsWith(" ")) {
      block.push(lines[i] as string);
      i++;
    }
    if (block.length === 0) return undefined;
    const indent = /^[ ]+/.exec(block[0] as string)?.[0].length ?? 0;
    const items = block.map((b) => ITEM_REGEXP.exec(b));
    if (items.every((item) => item?.[1]?.length === indent)) {
      const values = scalars(items.map((item) => item![2]!));
      if (values === undefined) return undefined;
      result[key] = values;
      continue;
    }
    const mapping: { [key: string]: Value } = {};
    for (const b of block) {
      const nested = NESTED_KEY_REGEXP.exec(b);
      if (!nested || (nested[1] as string).length !== indent) return undefined;
      const nestedKey = nested[2] as string;
      if (Object.hasOwn(mapping, nestedKey)) return undefined;
      const value = valueOf(nested[3] ?? "");
      if (value === undefined) return undefined;
      mapping[nestedKey] = value;
    }
    result[key] = mapping;
  }
  return result;
}
