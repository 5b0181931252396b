/**
 * The memory manager's built-in memory mirroring: a committed write of the
 * built-in `memory` tool is forwarded to the external provider
 * (`onMemoryWrite`, one call per operation), and a terminal failure of the
 * store as `onMemoryEvict`. The built-in provider, the source, never gets
 * either.
 *
 * @module
 */

import { log } from "../core/log.ts";
import type {
  MemoryEvictOptions,
  MemoryTarget,
  MemoryWriteAction,
  MemoryWriteMetadata,
} from "../core/memory_provider.ts";
import { providerHook } from "../core/provider_hooks.ts";
import { redactForEgress } from "../core/redact.ts";
import { isRecord } from "../_util/is_record.ts";
import { type ProviderFanOut, redactedErrorText } from "./provider_fan_out.ts";

/**
 * Options of {@linkcode MemoryManager.notifyMemoryToolWrite}.
 *
 * @category Manager
 */
export interface NotifyMemoryToolWriteOptions {
  /**
   * Builds the provenance of the write (`write_origin`, `execution_context`,
   * `session_id`, `parent_session_id`, `platform`, `tool_name`); called
   * once per mirrored operation.
   */
  buildMetadata?: () => MemoryWriteMetadata;
}

const MIRRORED_ACTIONS = new Set(["add", "replace", "remove"]);
const EVICTED_ACTIONS = new Set(["add", "replace"]);

/** Mirrors built-in memory writes to the external provider; see `MemoryManager`. */
export class BuiltinMemoryMirror {
  readonly #fanOut: ProviderFanOut;

  /**
   * Creates the mirror.
   *
   * @param fanOut The registered providers.
   */
  constructor(fanOut: ProviderFanOut) {
    this.#fanOut = fanOut;
  }

  /**
   * See `MemoryManager.notifyMemoryToolWrite()`.
   *
   * @param result The memory tool's result.
   * @param args The memory tool's arguments.
   * @param options How to build each operation's provenance.
   */
  async notifyMemoryToolWrite(
    result: unknown,
    args: Record<string, unknown>,
    options: NotifyMemoryToolWriteOptions,
  ): Promise<void> {
    let parsed: unknown = result;
    if (typeof result === "string") {
      try {
        parsed = JSON.parse(result);
      } catch {
        return;
      }
    }
    if (!isRecord(parsed) || !isRecord(args)) return;
    const target = String(args.target || "memory") as MemoryTarget;
    const operations = args.operations;
    const batched = Array.isArray(operations) && operations.length > 0;
    const ops: unknown[] = batched ? operations : [args];
    const committed = parsed.success === true && parsed.staged !== true;
    const terminal = parsed.success === false && parsed.done === true &&
      typeof parsed.error === "string" && parsed.error !== "";
    if (!committed && !terminal) return;
    for (let index = 1; index <= ops.length; index++) {
      const op = ops[index - 1];
      const action = isRecord(op) ? String(op.action ?? "") : "";
      try {
        if (!isRecord(op)) continue;
        if (
          committed
            ? !MIRRORED_ACTIONS.has(action)
            : !EVICTED_ACTIONS.has(action)
        ) continue;
        const metadata: MemoryWriteMetadata = {
          ...(options.buildMetadata?.() ?? {}),
        };
        delete metadata.previous_content;
        if (op.old_text) metadata.old_text = String(op.old_text);
        const content = String(op.content || op.new_text || "");
        if (terminal) {
          metadata.eviction_reason = parsed.error;
          await this.onMemoryEvict(content, target, { metadata });
          continue;
        }
        const field = action === "replace"
          ? "replaced"
          : action === "remove"
          ? "removed"
          : "";
        if (field !== "") {
          let previous: unknown;
          if (batched) {
            const entries = parsed[`${field}_entries`];
            previous = isRecord(entries) ? entries[String(index)] : undefined;
          } else {
            previous = parsed[`${field}_entry`];
          }
          if (typeof previous === "string" && previous !== "") {
            metadata.previous_content = previous;
          }
        }
        await this.onMemoryWrite(
          action as MemoryWriteAction,
          target,
          content,
          metadata,
        );
      } catch (error) {
        log(
          "debug",
          `notifyMemoryToolWrite failed for op ${action}: ${
            redactedErrorText(error)
          }`,
        );
      }
    }
  }

  /**
   * See `MemoryManager.onMemoryWrite()`.
   *
   * @param action `add`, `replace` or `remove`.
   * @param target `memory` or `user`.
   * @param content The entry's text.
   * @param metadata Provenance, `old_text`, `previous_content`.
   */
  async onMemoryWrite(
    action: MemoryWriteAction,
    target: MemoryTarget,
    content: string,
    metadata: MemoryWriteMetadata,
  ): Promise<void> {
    const [text, meta] = redactForEgress([String(content ?? ""), {
      ...(metadata ?? {}),
    }]);
    await this.#fanOut.each(
      this.#fanOut.externals,
      "onMemoryWrite",
      (e) =>
        providerHook(e.provider, "onMemoryWrite").call(
          e.provider,
          action,
          target,
          text,
          { ...meta },
        ),
    );
  }

  /**
   * See `MemoryManager.onMemoryEvict()`.
   *
   * @param content The dropped text.
   * @param target `memory` or `user`.
   * @param options Metadata with `eviction_reason`.
   */
  async onMemoryEvict(
    content: string,
    target: MemoryTarget,
    options: MemoryEvictOptions,
  ): Promise<void> {
    const [text, meta] = redactForEgress([String(content ?? ""), {
      ...(options.metadata ?? {}),
    }]);
    await this.#fanOut.each(
      this.#fanOut.externals,
      "onMemoryEvict",
      (e) =>
        providerHook(e.provider, "onMemoryEvict").call(
          e.provider,
          text,
          target,
          {
            metadata: { ...meta },
          },
        ),
    );
  }
}
