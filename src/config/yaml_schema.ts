// The YAML schema Hermes reads `config.yaml` with: PyYAML's `safe_load`
// (YAML 1.1, resolved by PyYAML's own implicit resolvers), expressed as tags
// for the `yaml` package. Only types are imported from the package, so this
// file adds nothing to what loads at start-up.
//
// What differs from the `yaml` package's own YAML 1.1 schema, and why it
// matters for a Hermes home:
// - booleans are exactly yes/no/true/false/on/off in three casings each;
//   `y`, `n`, `Y`, `N` stay strings (also as keys: `{x: 1, y: 2}`);
// - an integer in decimal may not start with 0 (`08`, `09` stay strings),
//   `0o17` is a string, `0_7` is octal 7, `1:30` is 90 (base 60);
// - a float needs a dot (`1e3`, `1e-7` stay strings) and a signed exponent
//   (`1.0e3` is a string, `1.0e+3` is 1000), `-.5` is a string;
// - `=` is PyYAML's `value` tag, which `safe_load` cannot construct.
import type { ScalarTag, Tags } from "npm:yaml@^2.9.1";
import { pythonFloatRepr } from "../_util/python_json.ts";

const PY_BOOL =
  /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
const PY_TRUE = /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/;
const PY_INT =
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const PY_FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const PY_NULL = /^(?:~|null|Null|NULL|)$/;

/** A YAML boolean as PyYAML resolves and constructs it. */
const boolTag: ScalarTag = {
  identify: (value) => typeof value === "boolean",
  default: true,
  tag: "tag:yaml.org,2002:bool",
  test: PY_BOOL,
  // An explicit `!!bool 'x'` is constructed from any text PyYAML knows.
  resolve: (text) => PY_TRUE.test(text),
  stringify: ({ value }) => value ? "true" : "false",
};

const nullTag: ScalarTag = {
  identify: (value) => value === null || value === undefined,
  default: true,
  tag: "tag:yaml.org,2002:null",
  test: PY_NULL,
  resolve: () => null,
  stringify: () => "null",
};

// PyYAML's construct_yaml_int: `_` dropped, sign, then 0 / 0b / 0x /
// leading-0 octal / base 60 / decimal.
function constructInt(text: string): number | bigint {
  let value = text.replaceAll("_", "");
  let sign = 1n;
  if (value[0] === "-" || value[0] === "+") {
    if (value[0] === "-") sign = -1n;
    value = value.slice(1);
  }
  let n: bigint;
  if (value === "0") n = 0n;
  else if (value.startsWith("0b")) n = BigInt(value);
  else if (value.startsWith("0x")) n = BigInt(value);
  else if (value[0] === "0") n = BigInt(`0o${value.slice(1)}`);
  else if (value.includes(":")) {
    n = value.split(":").reduce((acc, part) => acc * 60n + BigInt(part), 0n);
  } else n = BigInt(value);
  n *= sign;
  return Number.isSafeInteger(Number(n)) ? Number(n) : n;
}

// Whole numbers beyond 2^53 are floats to JavaScript; they are written as
// floats (`1.0e+21`), which PyYAML reads as the same float.
const intTag: ScalarTag = {
  identify: (value) =>
    typeof value === "bigint" ||
    (typeof value === "number" && Number.isSafeInteger(value)),
  default: true,
  tag: "tag:yaml.org,2002:int",
  test: PY_INT,
  resolve: (text) => constructInt(text),
  stringify: ({ value }) => String(value),
};

// PyYAML's construct_yaml_float.
function constructFloat(text: string): number {
  let value = text.replaceAll("_", "").toLowerCase();
  let sign = 1;
  if (value[0] === "-" || value[0] === "+") {
    if (value[0] === "-") sign = -1;
    value = value.slice(1);
  }
  if (value === ".inf") return sign * Infinity;
  if (value === ".nan") return NaN;
  if (value.includes(":")) {
    return sign * value.split(":").reduce(
      (acc, part) => acc * 60 + Number(part),
      0,
    );
  }
  return sign * Number(value);
}

/**
 * A float as PyYAML's representer writes it (Python's `repr`, `.0` on
 * integral values, `.inf`/`.nan`): it needs a dot and a signed exponent.
 */
export function pythonFloatText(value: number): string {
  if (Number.isNaN(value)) return ".nan";
  if (value === Infinity) return ".inf";
  if (value === -Infinity) return "-.inf";
  // PyYAML needs a dot in the mantissa: 1e-07 is written 1.0e-07.
  return pythonFloatRepr(value).replace(/^(-?\d+)e/, "$1.0e");
}

const floatTag: ScalarTag = {
  identify: (value) =>
    typeof value === "number" && !Number.isSafeInteger(value),
  default: true,
  tag: "tag:yaml.org,2002:float",
  test: PY_FLOAT,
  resolve: (text) => constructFloat(text),
  stringify: ({ value }) => pythonFloatText(Number(value)),
};

/** A scalar PyYAML resolves to its `value` tag (`=`), which it refuses. */
const valueTag: ScalarTag = {
  identify: () => false,
  default: true,
  tag: "tag:yaml.org,2002:value",
  test: /^=$/,
  resolve: (_text, onError) => {
    onError(
      "could not determine a constructor for the tag 'tag:yaml.org,2002:value' (quote the '=')",
    );
    return "=";
  },
};

// `!!float 1`, `!!int '42'`, `!!bool 'yes'`, `!!null ''`: an explicit tag
// constructs the text the way PyYAML's constructor does, whatever it looks
// like (tags without `default` are found by name, without their test).
function explicit(
  tag: string,
  construct: (text: string) => unknown,
): ScalarTag {
  return {
    identify: () => false,
    tag,
    resolve: (text, onError) => {
      const value = construct(text);
      if (
        typeof value === "number" && Number.isNaN(value) && !/nan/i.test(text)
      ) {
        onError(`invalid value '${text}' for ${tag}`);
      }
      return value;
    },
  };
}

const EXPLICIT: ScalarTag[] = [
  explicit("tag:yaml.org,2002:float", constructFloat),
  explicit(
    "tag:yaml.org,2002:int",
    (text) => PY_INT.test(text) ? constructInt(text) : NaN,
  ),
  explicit("tag:yaml.org,2002:bool", (text) => PY_TRUE.test(text)),
  explicit("tag:yaml.org,2002:null", () => null),
];

// PyYAML's timestamp: a date needs two-digit month and day; a time may
// end its seconds with a bare dot; a missing zone means UTC here (Python
// gives a naive datetime). Fractions keep milliseconds.
const PY_TIMESTAMP =
  /^(?:([0-9]{4})-([0-9]{2})-([0-9]{2})|([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?)$/;

function constructTimestamp(text: string): Date {
  const m = PY_TIMESTAMP.exec(text);
  if (m === null) return new Date(NaN);
  if (m[1] !== undefined) {
    return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  }
  const ms = Number(((m[10] ?? "") + "000").slice(0, 3));
  let time = Date.UTC(
    Number(m[4]),
    Number(m[5]) - 1,
    Number(m[6]),
    Number(m[7]),
    Number(m[8]),
    Number(m[9]),
    ms,
  );
  if (m[12] !== undefined) {
    const offset = Number(m[13]) * 60 + Number(m[14] ?? 0);
    time -= (m[12] === "-" ? -1 : 1) * offset * 60_000;
  }
  return new Date(time);
}

const timestampTag: ScalarTag = {
  identify: (value) => value instanceof Date,
  default: true,
  tag: "tag:yaml.org,2002:timestamp",
  test: PY_TIMESTAMP,
  resolve: (text) => constructTimestamp(text),
  stringify: ({ value }) =>
    (value as Date).toISOString().replace(/(T00:00:00)?\.000Z$/, ""),
};

// Characters PyYAML's reader refuses anywhere in a stream, even quoted.
const PY_NON_PRINTABLE =
  // deno-lint-ignore no-control-regex
  /[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
// Characters a plain scalar cannot hold for PyYAML: a tab (it cannot start
// a token), and NEL / LS / PS, which PyYAML takes as line breaks.
const PY_PLAIN_BREAKERS = /[\t\x85\u2028\u2029]/;

/**
 * A string as a double-quoted YAML scalar with only the escapes PyYAML
 * reads (`\\`, `\"`, `\t`, `\n`, `\r`, `\N`, `\L`, `\P`, `\xXX`,
 * `\uXXXX`, `\UXXXXXXXX`).
 */
export function pythonDoubleQuoted(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (code === 0x85) out += "\\N";
    else if (code === 0x2028) out += "\\L";
    else if (code === 0x2029) out += "\\P";
    else if (PY_NON_PRINTABLE.test(ch) || code < 0x20) {
      out += code <= 0xff
        ? `\\x${code.toString(16).padStart(2, "0")}`
        : code <= 0xffff
        ? `\\u${code.toString(16).padStart(4, "0")}`
        : `\\U${code.toString(16).padStart(8, "0")}`;
    } else out += ch;
  }
  return `${out}"`;
}

// The package's string writer, except where PyYAML would read its output
// differently: strings with a tab, NEL/LS/PS or a character PyYAML's
// reader refuses, and `<<` (a merge key to PyYAML), are double-quoted with
// PyYAML's escapes.
function pythonSafeString(tag: ScalarTag): ScalarTag {
  const original = tag.stringify;
  return {
    ...tag,
    stringify(item, ctx, onComment, onChompKeep) {
      // The merge tag also claims the text "<<"; only a real merge key
      // (not a string) may stay bare.
      if (typeof item.value !== "string") {
        return original ? original(item, ctx, onComment, onChompKeep) : "";
      }
      const value = item.value;
      if (
        value === "<<" || PY_PLAIN_BREAKERS.test(value) ||
        PY_NON_PRINTABLE.test(value)
      ) {
        return pythonDoubleQuoted(value);
      }
      return original
        ? original(item, ctx, onComment, onChompKeep)
        : pythonDoubleQuoted(value);
    },
  };
}

const REPLACED = new Set([
  "tag:yaml.org,2002:bool",
  "tag:yaml.org,2002:null",
  "tag:yaml.org,2002:int",
  "tag:yaml.org,2002:float",
  "tag:yaml.org,2002:timestamp",
]);

/**
 * The `customTags` option that turns the `yaml` package's YAML 1.1 schema
 * into PyYAML's scalar resolution (floats tried before integers, as PyYAML
 * does), plus the unconstructible `=`.
 */
export function pythonYamlTags(tags: Tags): Tags {
  const kept = tags.filter((tag) =>
    typeof tag === "string" || !REPLACED.has(tag.tag)
  ).map((tag) =>
    typeof tag !== "string" && !("collection" in tag && tag.collection) &&
      (tag.tag === "tag:yaml.org,2002:str" ||
        tag.tag === "tag:yaml.org,2002:merge")
      ? pythonSafeString(tag as ScalarTag)
      : tag
  );
  return [
    nullTag,
    boolTag,
    floatTag,
    intTag,
    timestampTag,
    valueTag,
    ...EXPLICIT,
    ...kept,
  ];
}
