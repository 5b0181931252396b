/**
 * A JSON serializer formatting exactly like Python's `json.dumps(value,
 * ensure_ascii=False)`, so tool results are byte-identical to Hermes'.
 *
 * @module
 */

/** Options of {@linkcode pythonJsonDumps}. */
interface PythonJsonDumpsOptions {
  /**
   * Escape every non-ASCII character as `\uXXXX` (surrogate pairs for astral
   * characters), like Python's default `ensure_ascii=True` (default `false`).
   */
  ensureAscii?: boolean;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

/**
 * Serializes a value the way Python's `json.dumps` does: its escapes, int
 * and float `repr` spellings, `NaN`/`Infinity`; objects keep insertion
 * order (pass a `Map` for integer-like keys), `undefined` members are left
 * out and `undefined` items become `null`.
 *
 * @throws {TypeError} When the value holds a circular reference, a function,
 * a symbol or a bigint.
 */
export function pythonJsonDumps(
  value: unknown,
  options: PythonJsonDumpsOptions = {},
): string {
  const out: string[] = [];
  writeValue(value, out, new Set(), options.ensureAscii ?? false);
  return out.join("");
}

function writeValue(
  value: unknown,
  out: string[],
  seen: Set<object>,
  ensureAscii: boolean,
): void {
  if (value === null || value === undefined) {
    out.push("null");
    return;
  }
  switch (typeof value) {
    case "string":
      out.push(quote(value, ensureAscii));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "number":
      out.push(formatNumber(value));
      return;
    case "object":
      break;
    default:
      throw new TypeError(
        `Cannot serialize a value of type ${typeof value} as JSON`,
      );
  }
  const obj = value as object;
  if (seen.has(obj)) {
    throw new TypeError("Cannot serialize a circular reference as JSON");
  }
  seen.add(obj);
  if (Array.isArray(obj)) {
    out.push("[");
    obj.forEach((item, i) => {
      if (i > 0) out.push(", ");
      writeValue(item, out, seen, ensureAscii);
    });
    out.push("]");
  } else {
    const entries: [string, unknown][] = obj instanceof Map
      ? [...obj.entries()].map(([k, v]) => [String(k), v])
      : Object.entries(obj);
    out.push("{");
    let first = true;
    for (const [key, item] of entries) {
      if (item === undefined) continue;
      if (!first) out.push(", ");
      first = false;
      out.push(quote(key, ensureAscii), ": ");
      writeValue(item, out, seen, ensureAscii);
    }
    out.push("}");
  }
  seen.delete(obj);
}

function quote(text: string, ensureAscii: boolean): string {
  let result = '"';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    const code = ch.charCodeAt(0);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) result += short;
    else if (code < 0x20 || (ensureAscii && code > 0x7e)) {
      result += "\\u" + code.toString(16).padStart(4, "0");
    } else result += ch;
  }
  return result + '"';
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "Infinity";
  if (value === -Infinity) return "-Infinity";
  if (Number.isInteger(value)) return BigInt(value).toString();
  return pythonFloatRepr(value);
}

/**
 * Python's float `repr` of a finite number: the shortest round-trip digits,
 * in scientific notation when the decimal exponent is below -4 or at least
 * 16 (`1e-07`, `0.0001`, `100.0`, `-0.0`).
 */
export function pythonFloatRepr(value: number): string {
  const sign = value < 0 || Object.is(value, -0) ? "-" : "";
  const [mantissa = "", expText = "0"] = Math.abs(value).toExponential()
    .split("e");
  const exponent = Number(expText);
  const digits = mantissa.replace(".", "");
  if (exponent < -4 || exponent >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const expSign = exponent < 0 ? "-" : "+";
    return `${sign}${head}e${expSign}${
      String(Math.abs(exponent)).padStart(2, "0")
    }`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const intPart = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  return `${sign}${intPart}.${digits.slice(exponent + 1) || "0"}`;
}

/**
 * What Python's `str()` prints for a JSON value, as Hermes puts tool
 * arguments into messages (`None`, `True`, `['a', 1]`, `{'k': None}`); a
 * JSON `1.0` arrives without its spelling and prints as `1`.
 */
export function pythonStr(value: unknown): string {
  return typeof value === "string" ? value : pythonRepr(value);
}

function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (value === Infinity) return "inf";
    if (value === -Infinity) return "-inf";
    return formatNumber(value);
  }
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") return pythonStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(", ")}]`;
  if (typeof value === "object") {
    return `{${
      Object.entries(value as Record<string, unknown>).map(([k, v]) =>
        `${pythonStringRepr(k)}: ${pythonRepr(v)}`
      ).join(", ")
    }}`;
  }
  return String(value);
}

function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (ch === quote || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) {
      out += `\\x${code.toString(16).padStart(2, "0")}`;
    } else out += ch;
  }
  return out + quote;
}
