/**
 * The pure part of `hermes memory setup`: reading a provider's config
 * schema (`when`, `default_from`, `choices`, types), parsing `--set
 * key=value`, and turning answers into what gets saved (non-secrets to
 * `config.yaml`, secrets and `env_var` fields to `.env`).
 *
 * Internal to the CLI; not exported from `@hermes/memory/cli`.
 *
 * @module
 */

import type { ConfigField } from "../core/memory_provider.ts";

/** A `--set` value that cannot be used; the message says why and what to do. */
export class SetupValueError extends Error {
  /**
   * Creates the error.
   *
   * @param message What is wrong and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "SetupValueError";
  }
}

/** One `--set key=value`. */
export interface SetAssignment {
  /** The field key. */
  key: string;
  /** The raw value. */
  value: string;
}

/**
 * Parses `key=value` (split at the first `=`; the key is trimmed, the value
 * kept as is).
 *
 * @param text The argument of `--set`.
 * @returns The assignment.
 * @throws {SetupValueError} When there is no `=` or the key is empty.
 *
 * @example Basic usage
 * ```ts
 * import { parseSetAssignment } from "./_setup_fields.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseSetAssignment("url=http://x?a=b"), { key: "url", value: "http://x?a=b" });
 * ```
 */
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

/**
 * Tells whether a field is shown for the current provider config: every
 * `when` entry must equal the config's value.
 *
 * @param field The schema field.
 * @param providerConfig The values so far.
 * @returns `true` when the field applies.
 *
 * @example Basic usage
 * ```ts
 * import { fieldApplies } from "./_setup_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(fieldApplies({ key: "k", when: { mode: "cloud" } }, { mode: "local" }), false);
 * ```
 */
export function fieldApplies(
  field: ConfigField,
  providerConfig: Record<string, unknown>,
): boolean {
  const when = field.when;
  if (when === undefined || when === null || typeof when !== "object") {
    return true;
  }
  return Object.entries(when).every(([k, v]) => providerConfig[k] === v);
}

/**
 * The default of a field: looked up through `default_from` (the map entry
 * for another field's current value) when it matches, else `default`.
 *
 * @param field The schema field.
 * @param providerConfig The values so far.
 * @returns The default, or `undefined`.
 *
 * @example Basic usage
 * ```ts
 * import { fieldDefault } from "./_setup_fields.ts";
 * import assert from "node:assert/strict";
 * const field = { key: "url", default: "a", default_from: { field: "mode", map: { local: "http://localhost" } } };
 * assert.equal(fieldDefault(field, { mode: "local" }), "http://localhost");
 * assert.equal(fieldDefault(field, {}), "a");
 * ```
 */
export function fieldDefault(
  field: ConfigField,
  providerConfig: Record<string, unknown>,
): unknown {
  const from = field.default_from;
  if (from && typeof from === "object" && typeof from.field === "string") {
    const current = providerConfig[from.field];
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
  /** The stored value. */
  value: unknown;
  /** The label shown. */
  label: string;
  /** A hint, when the schema gives one. */
  description?: string;
}

/**
 * The allowed values of a field (`choices`, or `options` with
 * `value`/`label`), or `undefined` when it is free text.
 *
 * @param field The schema field.
 * @returns The choices, or `undefined`.
 *
 * @example Basic usage
 * ```ts
 * import { fieldChoices } from "./_setup_fields.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fieldChoices({ key: "k", choices: ["a"] }), [{ value: "a", label: "a" }]);
 * ```
 */
export function fieldChoices(field: ConfigField): FieldChoice[] | undefined {
  const list = Array.isArray(field.choices) && field.choices.length > 0
    ? field.choices
    : Array.isArray(field.options) && field.options.length > 0
    ? field.options
    : undefined;
  if (list === undefined) return undefined;
  return list.map((entry): FieldChoice => {
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

/**
 * The field's type: `integer`, `number`, `boolean` or `text` (from `type`
 * or `kind`; a boolean default also means boolean).
 *
 * @param field The schema field.
 * @returns The type.
 *
 * @example Basic usage
 * ```ts
 * import { fieldType } from "./_setup_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(fieldType({ key: "k", default: true }), "boolean");
 * ```
 */
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

/**
 * Converts a typed answer to the field's type and checks choices and
 * bounds.
 *
 * @param field The schema field.
 * @param raw The text the user typed (or gave to `--set`).
 * @returns The value to store.
 * @throws {SetupValueError} When the value does not fit the field.
 *
 * @example Basic usage
 * ```ts
 * import { convertFieldValue } from "./_setup_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(convertFieldValue({ key: "n", type: "integer" }, "42"), 42);
 * assert.equal(convertFieldValue({ key: "b", type: "boolean" }, "yes"), true);
 * ```
 */
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
    if (typeof field.minimum === "number" && n < field.minimum) {
      throw new SetupValueError(
        `Cannot use ${n} for ${field.key}: the minimum is ${field.minimum}`,
      );
    }
    if (typeof field.maximum === "number" && n > field.maximum) {
      throw new SetupValueError(
        `Cannot use ${n} for ${field.key}: the maximum is ${field.maximum}`,
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

/** The label a prompt shows for a field. */
export function fieldLabel(field: ConfigField): string {
  const base = typeof field.label === "string" && field.label
    ? field.label
    : field.key;
  return typeof field.description === "string" && field.description
    ? `${base} \u2014 ${field.description}`
    : base;
}

/**
 * The setup hint of a provider in the picker: secrets and other fields →
 * `API key / local`; only secrets → `requires API key`; no schema → `no
 * setup needed`; otherwise `local`.
 *
 * @param schema The provider's config schema.
 * @returns The hint.
 *
 * @example Basic usage
 * ```ts
 * import { setupHint } from "./_setup_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(setupHint([]), "no setup needed");
 * assert.equal(setupHint([{ key: "k", secret: true }]), "requires API key");
 * ```
 */
export function setupHint(schema: readonly ConfigField[]): string {
  if (schema.length === 0) return "no setup needed";
  const secrets = schema.filter((f) => f.secret === true).length;
  if (secrets > 0 && secrets < schema.length) return "API key / local";
  if (secrets > 0) return "requires API key";
  return "local";
}
