/** The one setup walker (for `hermes memory setup` and a provider's own setup) and the field rules it shares with `--set`. @module */

import { type CliIo, PromptCancelled } from "./cli_io.ts";
import type { ConfigField } from "../core/memory_provider.ts";
import { maskSecret } from "../core/mask.ts";

/** A `--set` value that cannot be used; the message says why and what to do. */
export class SetupValueError extends Error {
  override name = "SetupValueError";
}

/** One `--set key=value`. */
export interface SetAssignment {
  key: string;
  value: string;
}

/** Splits `key=value` at the first `=` (the key trimmed, the value kept). */
export function parseSetAssignment(text: string): SetAssignment {
  const at = text.indexOf("=");
  const key = at < 0 ? "" : text.slice(0, at).trim();
  if (at < 0 || key === "") {
    throw new SetupValueError(
      `Cannot use --set '${text}': write it as key=value, for example --set workspace=hermes`,
    );
  }
  return { key, value: text.slice(at + 1) };
}

/** Whether every `when` entry of the field equals the value so far. */
export function fieldApplies(
  field: ConfigField,
  values: Record<string, unknown>,
): boolean {
  const when = field.when;
  if (!when || typeof when !== "object") return true;
  return Object.entries(when).every(([k, v]) => values[k] === v);
}

/** The `default_from` entry for another field's value, else `default`. */
export function fieldDefault(
  field: ConfigField,
  values: Record<string, unknown>,
): unknown {
  const from = field.default_from;
  if (from && typeof from === "object" && typeof from.field === "string") {
    const current = values[from.field];
    const map = from.map ?? {};
    if (
      (typeof current === "string" || typeof current === "number" ||
        typeof current === "boolean") &&
      Object.hasOwn(map, String(current))
    ) {
      return map[String(current)];
    }
  }
  return field.default;
}

/** One allowed value of a field, with its label. */
export interface FieldChoice {
  value: unknown;
  label: string;
  description?: string;
}

/** The field's `choices` (or `options` with `value`/`label`); `undefined` for free text. */
export function fieldChoices(field: ConfigField): FieldChoice[] | undefined {
  return [field.choices, field.options].find((list) =>
    Array.isArray(list) && list.length > 0
  )?.map((entry): FieldChoice => {
    if (entry !== null && typeof entry === "object" && "value" in entry) {
      const e = entry as Record<string, unknown>;
      return {
        value: e.value,
        label: typeof e.label === "string" ? e.label : String(e.value),
        description: typeof e.description === "string"
          ? e.description
          : undefined,
      };
    }
    return { value: entry, label: String(entry) };
  });
}

/** `integer`, `number`, `boolean` or `text`, from `type` or `kind` (a boolean default means boolean). */
export function fieldType(
  field: ConfigField,
): "text" | "integer" | "number" | "boolean" {
  const t = String(field.type ?? field.kind ?? "").toLowerCase();
  if (t === "integer" || t === "int") return "integer";
  if (t === "number" || t === "float") return "number";
  if (t === "boolean" || t === "bool") return "boolean";
  if (t === "" && typeof field.default === "boolean") return "boolean";
  return "text";
}

/** Converts typed text to the field's type, checking bounds and choices. */
export function convertFieldValue(field: ConfigField, raw: string): unknown {
  const text = raw.trim();
  const type = fieldType(field);
  let value: unknown = raw;
  if (type === "integer" || type === "number") {
    const n = Number(text);
    if (
      text === "" || !Number.isFinite(n) ||
      (type === "integer" && !Number.isInteger(n))
    ) {
      throw new SetupValueError(
        `Cannot use '${raw}' for ${field.key}: it must be ${
          type === "integer" ? "a whole number" : "a number"
        }`,
      );
    }
    const { minimum: min, maximum: max } = field;
    const bound = typeof min === "number" && n < min
      ? `minimum is ${min}`
      : typeof max === "number" && n > max
      ? `maximum is ${max}`
      : undefined;
    if (bound) {
      throw new SetupValueError(
        `Cannot use ${n} for ${field.key}: the ${bound}`,
      );
    }
    value = n;
  } else if (type === "boolean") {
    const v = text.toLowerCase();
    if (["1", "true", "yes", "on", "y"].includes(v)) value = true;
    else if (["0", "false", "no", "off", "n"].includes(v)) value = false;
    else {
      throw new SetupValueError(
        `Cannot use '${raw}' for ${field.key}: answer true or false`,
      );
    }
  }
  const choices = fieldChoices(field);
  if (choices !== undefined) {
    const match = choices.find((c) =>
      c.value === value || String(c.value) === text
    );
    if (match === undefined) {
      throw new SetupValueError(
        `Cannot use '${raw}' for ${field.key}: choose one of ${
          choices.map((c) => String(c.value)).join(", ")
        }`,
      );
    }
    value = match.value;
  }
  return value;
}

/** The question a prompt shows for a field. */
export function fieldLabel(field: SetupField): string {
  if (field.prompt) return field.prompt;
  const base = typeof field.label === "string" && field.label
    ? field.label
    : field.key;
  return typeof field.description === "string" && field.description
    ? `${base} \u2014 ${field.description}`
    : base;
}

/** The picker's hint for a provider: `API key / local`, `requires API key`, `no setup needed` or `local`. */
export function setupHint(schema: readonly ConfigField[]): string {
  if (schema.length === 0) return "no setup needed";
  const secrets = schema.filter((f) => f.secret === true).length;
  if (secrets > 0 && secrets < schema.length) return "API key / local";
  if (secrets > 0) return "requires API key";
  return "local";
}

/** One question of a setup wizard: a provider's {@linkcode ConfigField} and, optionally, how the wizard words and checks it. */
export interface SetupField extends ConfigField {
  /** The question asked, instead of the field's label and description. */
  prompt?: string;
  /** Printed before a secret is asked for while none is set. Default: `Get one at <url>`. */
  note?: string;
  /** Converts a typed answer; an `Error` it throws is printed and the question asked again. Default: the field's type and choices. */
  parse?: (text: string, io: CliIo) => unknown;
}

/** What {@linkcode walkSetupFields} asks and where it starts. */
export interface SetupWalk {
  /** The questions, in order. */
  fields: readonly SetupField[];
  /** A field's value now: the default of its question (a secret's "Enter keeps it"). */
  current: (field: SetupField, values: Record<string, unknown>) => unknown;
  /** Values that are not asked (flags, `--set`), already converted, by key. */
  given?: Readonly<Record<string, unknown>>;
  /** Values known before the walk, which `when` and `default_from` may read. */
  values?: Readonly<Record<string, unknown>>;
  /** Whether to ask; when `false` each field keeps its given or current value. */
  interactive: boolean;
}

/** What {@linkcode walkSetupFields} collected. */
export interface SetupAnswers {
  /** The value in effect of every field that applies: given, answered, else current. */
  values: Record<string, unknown>;
  /** Only the values given or typed (a secret's kept value is not among them). */
  answered: Record<string, unknown>;
  /** Required fields that have no value. */
  missing: SetupField[];
}

const empty = (v: unknown) => v === undefined || v === null || v === "";

/**
 * Walks a provider's setup fields: a field whose `when` does not hold is
 * skipped, a given one is not asked, the rest are asked on the terminal
 * (a picker for choices, yes/no for booleans, hidden input for secrets,
 * text checked by `parse` otherwise) with the current value as default.
 * Nothing is written: the caller saves the answers. Ctrl-C throws
 * {@linkcode PromptCancelled}.
 *
 * @param walk The fields, their current values and what is already given.
 * @param io Where to ask.
 * @returns The values in effect, those given or typed, and what is missing.
 *
 * @example Asking a provider's settings
 * ```ts
 * import { memoryCliIo, walkSetupFields } from "@hermes/memory/cli";
 * import assert from "node:assert/strict";
 * const io = memoryCliIo({ stdinIsTerminal: true, answers: ["local", "9"] });
 * const { answered } = await walkSetupFields({
 *   fields: [
 *     { key: "mode", choices: ["cloud", "local"] },
 *     { key: "top_k", type: "integer", when: { mode: "local" } },
 *   ],
 *   current: (field) => field.default,
 *   interactive: true,
 * }, io);
 * assert.deepEqual(answered, { mode: "local", top_k: 9 });
 * ```
 */
export async function walkSetupFields(
  walk: SetupWalk,
  io: CliIo,
): Promise<SetupAnswers> {
  const values: Record<string, unknown> = { ...walk.values };
  const answered: Record<string, unknown> = {};
  const missing: SetupField[] = [];
  const given = walk.given ?? {};
  for (const field of walk.fields) {
    if (!fieldApplies(field, values)) continue;
    const current = walk.current(field, values);
    let value: unknown;
    if (Object.hasOwn(given, field.key)) value = given[field.key];
    else if (walk.interactive) {
      value = field.secret === true
        ? await askSecret(field, current, io)
        : await askField(field, current, io);
    }
    if (!empty(value)) {
      values[field.key] = answered[field.key] = value;
    } else if (!empty(current)) {
      values[field.key] = current;
    } else if (field.required === true) missing.push(field);
  }
  return { values, answered, missing };
}

async function askSecret(
  field: SetupField,
  current: unknown,
  io: CliIo,
): Promise<string | undefined> {
  const label = fieldLabel(field);
  const kept = typeof current === "string" && current !== "";
  const message = kept
    ? `${label} [${maskSecret(current)}; Enter keeps it]`
    : field.required === true
    ? label
    : `${label} (optional; Enter for none)`;
  const note = field.note ??
    (typeof field.url === "string" && field.url
      ? `  Get one at ${field.url}`
      : undefined);
  if (!kept && note) io.stdout(`${note}\n`);
  for (;;) {
    const answer = (await io.prompts.password({ message })).trim();
    if (answer !== "") return answer;
    if (kept || field.required !== true) return undefined;
    io.stderr(`A value is required for ${label} (Ctrl-C to stop)\n`);
  }
}

async function askField(
  field: SetupField,
  current: unknown,
  io: CliIo,
): Promise<unknown> {
  const message = fieldLabel(field);
  const choices = fieldChoices(field);
  if (choices !== undefined) {
    return await io.prompts.select({
      message,
      choices: choices.map((c) => ({
        value: c.value,
        name: c.label,
        description: c.description,
      })),
      default: choices.find((c) => c.value === current)?.value,
    });
  }
  if (fieldType(field) === "boolean" && !field.parse) {
    const fallback = current === undefined
      ? false
      : convertFieldValue(field, String(current)) as boolean;
    return await io.prompts.confirm({ message, default: fallback });
  }
  for (;;) {
    const answer = await io.prompts.input({
      message,
      default: empty(current) ? undefined : String(current),
    });
    if (answer.trim() === "") return undefined;
    try {
      return field.parse
        ? field.parse(answer, io)
        : convertFieldValue(field, answer);
    } catch (error) {
      if (error instanceof PromptCancelled || !(error instanceof Error)) {
        throw error;
      }
      io.stderr(`${error.message}\n`);
    }
  }
}
