/**
 * The memory manager's tool router: which provider owns each tool name
 * (reserved core tool names and later duplicates refused), the combined
 * tool schemas of every provider, and the dispatch of a tool call to its
 * owner with redacted arguments and a JSON-string result.
 *
 * @module
 */

import { log } from "../core/log.ts";
import type { ToolCallOptions, ToolSchema } from "../core/memory_provider.ts";
import { providerHook } from "../core/provider_hooks.ts";
import { redactForEgress } from "../core/redact.ts";
import { isRecord } from "../_util/is_record.ts";
import {
  normalizeToolSchema,
  RESERVED_CORE_TOOL_NAMES,
  toolError,
} from "./tool_schema.ts";
import {
  describeValue,
  type ProviderEntry,
  type ProviderFanOut,
  redactedErrorText,
} from "./provider_fan_out.ts";

/** Routes tool names to the providers that own them. */
export class ToolRouter {
  #routes = new Map<string, ProviderEntry>();
  readonly #fanOut: ProviderFanOut;

  /**
   * Creates a router with no routes.
   *
   * @param fanOut The registered providers.
   */
  constructor(fanOut: ProviderFanOut) {
    this.#fanOut = fanOut;
  }

  /**
   * Routes each of a newly registered provider's tools to it, unless the
   * name is a reserved core tool or already routed (warnings).
   *
   * @param entry The provider.
   * @param schemas Its raw tool schemas.
   */
  route(entry: ProviderEntry, schemas: readonly unknown[]): void {
    for (const raw of schemas) {
      const schema = normalizeToolSchema(raw);
      if (schema === null) continue;
      const tool = schema.name;
      const owner = this.#routes.get(tool);
      if (RESERVED_CORE_TOOL_NAMES.has(tool)) {
        log(
          "warn",
          `Memory provider '${entry.name}' tool '${tool}' shadows a reserved core tool name; registration ignored. Core tools always win — rename the provider's tool to something unique.`,
        );
      } else if (owner !== undefined) {
        log(
          "warn",
          `Memory tool name conflict: '${tool}' already registered by ${owner.name}, ignoring from ${entry.name}`,
        );
      } else {
        this.#routes.set(tool, entry);
      }
    }
  }

  /**
   * The names of every routed tool.
   *
   * @returns A new set.
   */
  names(): Set<string> {
    return new Set(this.#routes.keys());
  }

  /**
   * Whether a tool is routed.
   *
   * @param name The tool's name.
   * @returns `true` when routed.
   */
  has(name: string): boolean {
    return this.#routes.has(name);
  }

  /**
   * Every provider's tool schemas; see
   * `MemoryManager.getAllToolSchemas()`.
   *
   * @returns The schemas.
   */
  async schemas(): Promise<ToolSchema[]> {
    const schemas: ToolSchema[] = [];
    const seen = new Set<string>();
    await this.#fanOut.each(
      this.#fanOut.entries,
      "getToolSchemas",
      async (e) => {
        const raw = await e.provider.getToolSchemas();
        if (!Array.isArray(raw)) {
          throw new TypeError(
            `returned ${describeValue(raw)} instead of an array`,
          );
        }
        for (const item of raw) {
          const schema = normalizeToolSchema(item);
          if (schema === null) {
            log(
              "warn",
              `Memory provider '${e.name}' returned a tool schema with no resolvable name; skipping (${
                describeValue(item)
              })`,
            );
          } else if (
            !RESERVED_CORE_TOOL_NAMES.has(schema.name) &&
            !seen.has(schema.name)
          ) {
            schemas.push(schema);
            seen.add(schema.name);
          }
        }
      },
    );
    return schemas;
  }

  /**
   * Runs a provider tool; see `MemoryManager.handleToolCall()`.
   *
   * @param toolName The tool's name.
   * @param args The model's arguments.
   * @param options Extra call context, passed through.
   * @returns The provider's JSON string, or `{"error": …}`.
   */
  async call(
    toolName: string,
    args: Record<string, unknown>,
    options: ToolCallOptions,
  ): Promise<string> {
    const entry = this.#routes.get(toolName);
    if (entry === undefined) {
      return toolError(`No memory provider handles tool '${toolName}'`);
    }
    const redacted = redactForEgress(isRecord(args) ? args : {});
    let result: unknown;
    try {
      result = await providerHook(entry.provider, "handleToolCall").call(
        entry.provider,
        toolName,
        redacted,
        { ...options },
      );
    } catch (error) {
      log(
        "error",
        `Memory provider '${entry.name}' handleToolCall(${toolName}) failed: ${
          redactedErrorText(error)
        }`,
      );
      return toolError(
        `Memory tool '${toolName}' failed: ${redactedErrorText(error)}`,
      );
    }
    if (typeof result === "string") return result;
    if (isRecord(result) || Array.isArray(result)) {
      try {
        return JSON.stringify(result);
      } catch {
        // Not serializable: reported below.
      }
    }
    log(
      "error",
      `Memory provider '${entry.name}' handleToolCall(${toolName}) failed: returned ${
        describeValue(result)
      } instead of a JSON string`,
    );
    return toolError(
      `Memory tool '${toolName}' failed: provider returned ${
        describeValue(result)
      } instead of a JSON string`,
    );
  }
}
