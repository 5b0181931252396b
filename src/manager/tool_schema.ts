// Tool schemas: normalizing what providers return, reserved core tool names,
// routing, and the gate that decides whether an agent exposes its external
// provider's tools.

import { log } from "../core/log.ts";
import type {
  MaybePromise,
  ToolCallOptions,
  ToolSchema,
} from "../core/memory_provider.ts";
import { providerHook } from "../core/provider_hooks.ts";
import { redactForEgress } from "../core/redact.ts";
import { errorText } from "../_util/error_text.ts";
import { isRecord } from "../_util/is_record.ts";

import { toolError } from "../core/tool_result.ts";
import {
  describeValue,
  eachProvider,
  type ProviderEntry,
  redactedErrorText,
} from "./_fan_out.ts";
import { words } from "../_util/python_text.ts";

export { toolError };

/** The host's core tool names (every Hermes release's): never routed to a provider. */
export const RESERVED_CORE_TOOL_NAMES: ReadonlySet<string> = new Set(words`
  web_search web_extract terminal process process_manage read_file write_file
  patch search_files vision_analyze image_generate mixture_of_agents
  skills_list skill_view skill_manage browser_navigate browser_snapshot
  browser_click browser_type browser_scroll browser_back browser_press
  browser_close browser_get_images browser_vision browser_console browser_cdp
  browser_dialog browser_exec text_to_speech todo todo_list memory
  session_search clarify execute_code delegate_task cronjob cronjob_manage
  send_message ha_list_entities ha_get_state ha_list_services ha_call_service
  kanban_show kanban_list kanban_complete kanban_block kanban_request_review
  kanban_request_changes kanban_heartbeat kanban_comment kanban_create
  kanban_link kanban_unblock kanban_attach kanban_attach_url
  kanban_attachments computer_use
`);

/** A provider's tool schema unwrapped from the OpenAI form, or `null` without a name. */
export function normalizeToolSchema(schema: unknown): ToolSchema | null {
  if (!isRecord(schema)) return null;
  let bare: Record<string, unknown> = schema;
  if (schema.type === "function" && isRecord(schema.function)) {
    bare = schema.function;
  }
  const name = bare.name;
  return typeof name === "string" && name !== "" ? bare as ToolSchema : null;
}

/** The toolset (and tool) name that gates memory-provider tools. */
const MEMORY_TOOLSET = "memory";

/**
 * Options of {@linkcode memoryProviderToolsEnabled}.
 *
 * @category Manager
 */
export interface MemoryProviderToolsEnabledOptions {
  /** The toolsets the agent disables (`agent.disabled_toolsets`) (default `[]`). */
  disabledToolsets?: readonly string[] | null;
  /** Whether the agent already offers the built-in `memory` tool (default `false`). */
  memoryToolPresent?: boolean;
  /**
   * Expands a toolset name to the tool names it includes (composites such as
   * `hermes-acp`); the host's toolset table. A throw counts as "does not
   * include `memory`". Without it only `all` and `*` (every tool) are known.
   */
  resolveToolset?: (name: string) => Iterable<string>;
}

/**
 * Whether an agent exposes its external provider's tools and prompt block, in
 * Hermes' order: `memory` disabled hides; the built-in tool or no filter
 * shows; an empty filter hides; else a listed toolset must include `memory`.
 *
 * @category Manager
 */
export function memoryProviderToolsEnabled(
  enabledToolsets: readonly string[] | null | undefined,
  options: MemoryProviderToolsEnabledOptions = {},
): boolean {
  if (options.disabledToolsets?.includes(MEMORY_TOOLSET)) return false;
  if (options.memoryToolPresent === true || enabledToolsets == null) {
    return true;
  }
  if (enabledToolsets.length === 0) return false;
  if (enabledToolsets.includes(MEMORY_TOOLSET)) return true;
  const resolve = options.resolveToolset ?? resolveWildcardToolset;
  try {
    return enabledToolsets.some((name) =>
      [...resolve(name)].includes(MEMORY_TOOLSET)
    );
  } catch (error) {
    log(
      "debug",
      `Failed to resolve enabled toolsets for memory-provider tools: ${
        errorText(error)
      }`,
    );
    return false;
  }
}

function resolveWildcardToolset(name: string): string[] {
  return name === "all" || name === "*" ? [MEMORY_TOOLSET] : [];
}

/**
 * An agent's tool surface, as {@linkcode injectMemoryProviderTools} edits it.
 *
 * @category Manager
 */
export interface MemoryToolSurface {
  /** The tools offered to the model, in OpenAI form (`{type, function}`). */
  tools: Record<string, unknown>[];
  /** The names the agent accepts tool calls for (created when absent). */
  validToolNames?: Set<string>;
  /** The agent's toolset filter, or `null` for none. */
  enabledToolsets?: readonly string[] | null;
  /** The toolsets the agent disables. */
  disabledToolsets?: readonly string[] | null;
}

/**
 * What {@linkcode injectMemoryProviderTools} needs from a memory manager.
 *
 * @category Manager
 */
export interface MemoryToolSource {
  /** The registered providers (names only are read). */
  readonly providers: readonly { readonly name: string }[];
  /** Every provider's tool schemas, bare and deduplicated. */
  getAllToolSchemas(): MaybePromise<ToolSchema[]>;
}

/**
 * Options of {@linkcode injectMemoryProviderTools}.
 *
 * @category Manager
 */
export interface InjectMemoryProviderToolsOptions {
  /**
   * Expands a toolset name to its tool names (see
   * {@linkcode MemoryProviderToolsEnabledOptions.resolveToolset}).
   */
  resolveToolset?: (name: string) => Iterable<string>;
}

/** The OpenAI-form tool's function name, if any. */
function surfaceToolName(tool: unknown): unknown {
  if (!isRecord(tool) || !isRecord(tool.function)) return undefined;
  return tool.function.name;
}

/**
 * {@linkcode memoryProviderToolsEnabled} applied to an agent's tool surface.
 *
 * @category Manager
 */
export function memoryProviderToolsExposed(
  surface: MemoryToolSurface,
  options: InjectMemoryProviderToolsOptions = {},
): boolean {
  const tools = Array.isArray(surface.tools) ? surface.tools : [];
  return memoryProviderToolsEnabled(surface.enabledToolsets, {
    disabledToolsets: surface.disabledToolsets,
    memoryToolPresent: tools.some((t) => surfaceToolName(t) === MEMORY_TOOLSET),
    resolveToolset: options.resolveToolset,
  });
}

/**
 * Appends the provider tools to an agent's surface (OpenAI form, new names
 * only, recorded in `validToolNames`) unless the gate is closed.
 *
 * @category Manager
 */
export async function injectMemoryProviderTools(
  surface: MemoryToolSurface,
  manager: MemoryToolSource | null | undefined,
  options: InjectMemoryProviderToolsOptions = {},
): Promise<number> {
  if (!manager || !Array.isArray(surface.tools)) return 0;
  if (!memoryProviderToolsExposed(surface, options)) {
    const external = manager.providers.filter((p) => p.name !== "builtin")
      .map((p) => p.name);
    if (external.length > 0) {
      log(
        "info",
        `Memory provider(s) ${
          external.join(", ")
        } configured but the 'memory' toolset is gated off for this session (platform_toolsets / agent.disabled_toolsets) — provider tools and system-prompt block are both withheld.`,
      );
    }
    return 0;
  }
  const existing = new Set(surface.tools.map(surfaceToolName));
  const valid = surface.validToolNames ??= new Set<string>();
  let added = 0;
  for (const raw of await manager.getAllToolSchemas()) {
    const schema = normalizeToolSchema(raw);
    if (schema === null) {
      log(
        "warn",
        "Memory provider returned a tool schema with no resolvable name; skipping to avoid poisoning the request",
      );
    } else if (!existing.has(schema.name)) {
      surface.tools.push({ type: "function", function: schema });
      valid.add(schema.name);
      existing.add(schema.name);
      added++;
    }
  }
  return added;
}

/** Every provider's tool schemas, bare, first of each name wins, reserved core names dropped. */
export async function collectToolSchemas(
  entries: readonly ProviderEntry[],
): Promise<ToolSchema[]> {
  const schemas: ToolSchema[] = [];
  const seen = new Set<string>();
  await eachProvider(entries, "getToolSchemas", async (e) => {
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
        !RESERVED_CORE_TOOL_NAMES.has(schema.name) && !seen.has(schema.name)
      ) {
        schemas.push(schema);
        seen.add(schema.name);
      }
    }
  });
  return schemas;
}

/** Runs a routed tool with redacted arguments; always answers a JSON string. */
export async function callProviderTool(
  entry: ProviderEntry,
  toolName: string,
  args: Record<string, unknown>,
  options: ToolCallOptions,
): Promise<string> {
  const redacted = redactForEgress(isRecord(args) ? args : {});
  const fail = (logged: string, shown = logged): string => {
    log(
      "error",
      `Memory provider '${entry.name}' handleToolCall(${toolName}) failed: ${logged}`,
    );
    return toolError(`Memory tool '${toolName}' failed: ${shown}`);
  };
  let result: unknown;
  try {
    result = await providerHook(entry.provider, "handleToolCall").call(
      entry.provider,
      toolName,
      redacted,
      { ...options },
    );
  } catch (error) {
    return fail(redactedErrorText(error));
  }
  if (typeof result === "string") return result;
  if (isRecord(result) || Array.isArray(result)) {
    try {
      return JSON.stringify(result);
    } catch {
      // Not serializable: reported below.
    }
  }
  const why = `returned ${describeValue(result)} instead of a JSON string`;
  return fail(why, `provider ${why}`);
}

/** Routes each of a new provider's tools to it, unless the name is a reserved core tool or already routed. */
export function routeTools(
  routes: Map<string, ProviderEntry>,
  entry: ProviderEntry,
  schemas: readonly unknown[],
): void {
  for (const raw of schemas) {
    const tool = normalizeToolSchema(raw)?.name;
    if (tool === undefined) continue;
    const owner = routes.get(tool);
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
      routes.set(tool, entry);
    }
  }
}
