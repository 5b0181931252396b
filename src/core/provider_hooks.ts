// The one table of the provider contract's hooks: the manager's failure
// logging, the worker's dispatch and the sandbox proxy are built from it.

import { log, type LogLevel } from "./log.ts";
import { type DrainResult, MemoryProvider } from "./memory_provider.ts";
import { redactText } from "./redact.ts";
import { errorText } from "../_util/error_text.ts";

/** How a hook crosses a sandbox boundary. */
export type HookTransport = "call" | "cast";

/** What the framework knows about one hook. */
export interface HookSpec {
  /** `call`: the caller needs the result; `cast`: posted one-way. */
  readonly transport: HookTransport;
  /** The level the manager logs a failure of the hook at. */
  readonly failureLevel: LogLevel;
  /** Whether that line carries the stack. */
  readonly stack: boolean;
  /** How the failure line names the hook (`prefetch`, `systemPromptBlock()`). */
  readonly label: string;
  /** Optional on the contract: present only when a provider defines it. */
  readonly optional: boolean;
}

function spec(
  transport: HookTransport,
  failureLevel: LogLevel,
  extra: { label?: string; stack?: boolean; optional?: boolean } = {},
): HookSpec {
  return Object.freeze({
    transport,
    failureLevel,
    stack: extra.stack ?? false,
    label: extra.label ?? "",
    optional: extra.optional ?? false,
  });
}

// Only methods of the contract: an unknown key fails the type check.
const TABLE = {
  isAvailable: spec("call", "debug", { label: "isAvailable()" }),
  initialize: spec("call", "warn"),
  initializeForInspection: spec("call", "warn"),
  getToolSchemas: spec("call", "warn", { label: "getToolSchemas()" }),
  unavailableReason: spec("call", "debug", { label: "unavailableReason()" }),
  systemPromptBlock: spec("call", "warn", { label: "systemPromptBlock()" }),
  prefetch: spec("call", "debug"),
  queuePrefetch: spec("cast", "debug"),
  recallStatus: spec("call", "debug", { label: "recallStatus()" }),
  syncTurn: spec("cast", "warn"),
  handleToolCall: spec("call", "error"),
  shutdown: spec("call", "warn"),
  onTurnStart: spec("cast", "debug"),
  identitySignature: spec("call", "debug", { label: "identitySignature()" }),
  onSessionEnd: spec("cast", "warn", { stack: true }),
  onSessionSwitch: spec("call", "debug"),
  onPreCompress: spec("call", "debug"),
  onDelegation: spec("cast", "debug"),
  getConfigSchema: spec("call", "debug", { label: "getConfigSchema()" }),
  saveConfig: spec("call", "warn"),
  onMemoryWrite: spec("cast", "debug"),
  onMemoryEvict: spec("cast", "debug"),
  backupPaths: spec("call", "debug", { label: "backupPaths()" }),
  postSetup: spec("call", "warn", { optional: true }),
  getStatusConfig: spec("call", "debug", {
    label: "getStatusConfig()",
    optional: true,
  }),
  drain: spec("call", "warn", { optional: true }),
} satisfies { [K in keyof MemoryProvider]?: HookSpec };

/** The methods of the contract that a host calls on a provider (the table's keys). */
export type ProviderHookName = keyof typeof TABLE;

/** Every hook of the contract with what the framework knows about it (an unset label is the hook's name). */
export const PROVIDER_HOOKS: Readonly<Record<ProviderHookName, HookSpec>> =
  Object.freeze(
    Object.fromEntries(
      Object.entries(TABLE).map(([name, value]: [string, HookSpec]) => [
        name,
        value.label === "" ? Object.freeze({ ...value, label: name }) : value,
      ]),
    ) as Record<ProviderHookName, HookSpec>,
  );

/** The hook names, in the table's order. */
export const PROVIDER_HOOK_NAMES: readonly ProviderHookName[] = Object.freeze(
  Object.keys(TABLE) as ProviderHookName[],
);

/** Tells whether a name is a hook of the contract (own keys only: never `__proto__`). */
export function isProviderHook(name: string): name is ProviderHookName {
  return Object.hasOwn(TABLE, name);
}

/**
 * A provider's hook, or the contract's default when a duck-typed provider
 * lacks it (`undefined` for an optional one); call it with `.call(provider, …)`.
 */
export function providerHook<K extends ProviderHookName>(
  provider: MemoryProvider,
  name: K,
): MemoryProvider[K] {
  const fn = (provider as unknown as Record<string, unknown>)[name];
  return (typeof fn === "function"
    ? fn
    : (MemoryProvider.prototype as unknown as Record<string, unknown>)[
      name
    ]) as MemoryProvider[K];
}

/**
 * Logs `Memory provider '<name>' <label> failed: <error>` (redacted) at the
 * level the table gives the hook, with the stack where it says so; `stackOf`
 * is the error whose stack is shown (a provider's own, before explaining).
 */
export function logProviderHookFailure(
  provider: string,
  hook: string,
  error: unknown,
  stackOf: unknown = error,
): void {
  const spec = isProviderHook(hook) ? PROVIDER_HOOKS[hook] : undefined;
  let message = `Memory provider '${provider}' ${spec?.label ?? hook} failed: ${
    redactText(errorText(error))
  }`;
  if (spec?.stack && stackOf instanceof Error && stackOf.stack) {
    message += `\n${redactText(stackOf.stack)}`;
  }
  log(spec?.failureLevel ?? "warn", message);
}

/** A provider's drain answer, checked (anything else counts as not drained). */
export function toDrainResult(value: unknown): DrainResult {
  if (value === null || typeof value !== "object") return { drained: false };
  const { drained, pending } = value as Record<string, unknown>;
  const result: DrainResult = { drained: drained === true };
  if (
    typeof pending === "number" && Number.isInteger(pending) && pending >= 0
  ) {
    result.pending = pending;
  }
  return result;
}
