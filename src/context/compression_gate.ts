// The host side of the pre-compress checkpoint gate (src/context/SPEC.md §6).

import { log } from "../core/log.ts";
import {
  type ChatMessage,
  type HermesConfig,
  type MaybePromise,
  PRE_COMPRESS_CHECKPOINT_API_VERSION,
} from "../core/memory_provider.ts";
import { normalizePreCompressEvidence } from "./pre_compress.ts";
import { sanitizeContext } from "./context_fence.ts";
import { redactText } from "../core/redact.ts";
import { configFlag, lookupConfig } from "../config/config_values.ts";
import { errorText } from "../_util/error_text.ts";

const CHECKPOINT_REQUIRED_KEY = "compression.checkpoint_required";
const NATIVE_COMPACTION_KEY = "compression.codex_responses_native";
const MICRO_COMPACTION_KEY = "compression.micro_compact";
const CHECKPOINT_BLOCK_PREFIX =
  "BLOCKED_MISSING_PREREQUISITE: required pre-compress checkpoint unavailable: ";

/** The remediation appended to configuration-caused block reasons. */
export const CHECKPOINT_REMEDIATION =
  "Recover by set compression.checkpoint_required: false, or switch to a memory provider that implements checkpoint API v2";

/** The exact block reasons of the Hermes contract (src/context/SPEC.md §6). */
export const CHECKPOINT_BLOCK_REASONS = Object.freeze({
  noProvider: "no active provider implements checkpoint API v2",
  probeFailed: "provider capability probe failed",
  notCapable:
    `active provider does not implement checkpoint API v2. ${CHECKPOINT_REMEDIATION}`,
  providerFailed: "provider checkpoint API v2 failed",
  checkpointlessApiMode:
    "api mode codex_app_server compacts without a pre-compress checkpoint boundary. Recover by set compression.checkpoint_required: false, or use an api mode that compacts through the host",
});

/** API modes that compact outside the host: refused while the gate is armed. */
const CHECKPOINTLESS_API_MODES: ReadonlySet<string> = new Set([
  "codex_app_server",
]);

/**
 * Thrown instead of rewriting a transcript when the armed gate cannot get a
 * durable checkpoint (message: `BLOCKED_MISSING_PREREQUISITE: …: <reason>`).
 * Keep the uncompressed transcript and retry later.
 *
 * @category Errors callers catch
 */
export class CompressionCheckpointUnavailable extends Error {
  /** Why the checkpoint is unavailable (the text after the prefix). */
  readonly reason: string;

  /** Builds the error from the reason and an optional `cause`. */
  constructor(reason: string, options?: ErrorOptions) {
    super(`${CHECKPOINT_BLOCK_PREFIX}${reason}`, options);
    this.name = "CompressionCheckpointUnavailable";
    this.reason = reason;
  }
}

/**
 * Options the gate passes to {@linkcode CheckpointManager.onPreCompress}.
 *
 * @category Context safety
 */
export interface CheckpointManagerPreCompressOptions {
  /** The normalized evidence, given to checkpoint (v2) providers. */
  evidenceMessages?: ChatMessage[];
  /** Throw unless a checkpoint provider committed. */
  requireCheckpoint?: boolean;
  /** The checkpoint API version that counts as a checkpoint provider. */
  checkpointApiVersion?: number;
}

/**
 * What the gate needs from a memory manager; `MemoryManager` fits it.
 *
 * @category Context safety
 */
export interface CheckpointManager {
  /** The registered providers, for the start-up warning's label. */
  readonly providers?: readonly { readonly name: string }[];
  /** Whether any provider advertises at least `apiVersion` (absent: none does). */
  supportsPreCompressCheckpoint?(apiVersion?: number): MaybePromise<boolean>;
  /** Fans the pre-compress hook out to the providers. */
  onPreCompress(
    messages: ChatMessage[],
    options?: CheckpointManagerPreCompressOptions,
  ): MaybePromise<string>;
}

/**
 * Options of {@linkcode checkpointBeforeCompression}.
 *
 * @category Context safety
 */
export interface CheckpointBeforeCompressionOptions {
  /** The loaded `config.yaml` (reads `compression.checkpoint_required`). */
  config: HermesConfig;
  /**
   * The agent does not persist its session (a review or `/btw` fork).
   *
   * @default {false}
   */
  persistDisabled?: boolean;
  /**
   * The agent has a session database (without one, `persistDisabled` skips the gate).
   *
   * @default {false}
   */
  hasSessionDb?: boolean;
}

/** Tells whether the gate is armed: `compression.checkpoint_required` (default `false`) is on. */
export function isCheckpointGateArmed(config: HermesConfig): boolean {
  return configFlag(lookupConfig(config, CHECKPOINT_REQUIRED_KEY), false);
}

/**
 * Runs the pre-compress memory hook before a lossy rewrite and returns the
 * sanitized `memory_context` for the compressor (src/context/SPEC.md §6).
 * On a throw do not compress: keep the transcript and retry later.
 *
 * @throws {CompressionCheckpointUnavailable} When the armed gate blocks.
 *
 * @category Context safety
 */
export async function checkpointBeforeCompression(
  manager: CheckpointManager | null | undefined,
  messages: readonly unknown[],
  options: CheckpointBeforeCompressionOptions,
): Promise<string> {
  if (options.persistDisabled && !options.hasSessionDb) return "";
  const raw = Array.isArray(messages)
    ? (messages.slice() as ChatMessage[])
    : [];
  const evidence = normalizePreCompressEvidence(raw);
  const preCompress = (m: CheckpointManager, requireCheckpoint: boolean) =>
    m.onPreCompress(raw, {
      evidenceMessages: evidence,
      requireCheckpoint,
      checkpointApiVersion: PRE_COMPRESS_CHECKPOINT_API_VERSION,
    });
  if (!isCheckpointGateArmed(options.config)) {
    if (!manager) return "";
    try {
      return sanitized(await preCompress(manager, false));
    } catch (error) {
      log(
        "debug",
        `Best-effort pre-compress memory hook failed: ${errorMessage(error)}`,
      );
      return "";
    }
  }
  if (!manager || typeof manager.supportsPreCompressCheckpoint !== "function") {
    throw new CompressionCheckpointUnavailable(
      CHECKPOINT_BLOCK_REASONS.noProvider,
    );
  }
  const capable = await probeCheckpoint(manager).catch((error) => {
    throw new CompressionCheckpointUnavailable(
      CHECKPOINT_BLOCK_REASONS.probeFailed,
      { cause: error },
    );
  });
  if (!capable) {
    throw new CompressionCheckpointUnavailable(
      CHECKPOINT_BLOCK_REASONS.notCapable,
    );
  }
  let text: string;
  try {
    text = await preCompress(manager, true);
  } catch (error) {
    log(
      "warn",
      `Pre-compress checkpoint failed (${
        errorType(error)
      }); keeping the uncompressed transcript: ${errorMessage(error)}`,
    );
    throw new CompressionCheckpointUnavailable(
      CHECKPOINT_BLOCK_REASONS.providerFailed,
      { cause: error },
    );
  }
  return sanitized(text);
}

/**
 * Logs Hermes' start-up warning when the gate is armed but no active
 * provider implements checkpoint API v2; `true` when it did. Never throws.
 *
 * @category Context safety
 */
export async function warnIfCheckpointGateUnsatisfied(
  manager: CheckpointManager | null | undefined,
  config: HermesConfig,
): Promise<boolean> {
  if (!isCheckpointGateArmed(config)) return false;
  try {
    if (await probeCheckpoint(manager)) return false;
  } catch (error) {
    log(
      "debug",
      `Pre-compress checkpoint capability probe failed at start-up: ${
        errorMessage(error)
      }`,
    );
    return false;
  }
  log(
    "warn",
    `${CHECKPOINT_REQUIRED_KEY} is enabled but the active memory provider (${
      providerLabel(manager)
    }) does not implement checkpoint API v${PRE_COMPRESS_CHECKPOINT_API_VERSION}. Compress will fail closed. ${CHECKPOINT_REMEDIATION}.`,
  );
  return true;
}

/**
 * Options of {@linkcode compactionPolicyFromConfig}.
 *
 * @category Context safety
 */
export interface CompactionPolicyOptions {
  /**
   * The agent's API mode (`chat_completions`, `codex_responses`,
   * `codex_app_server`, …).
   *
   * @default {""}
   */
  apiMode?: string;
}

/**
 * Options of {@linkcode CompactionPolicy.assertTurnAllowed}.
 *
 * @category Context safety
 */
export interface AssertTurnAllowedOptions {
  /**
   * The API mode the turn is about to run in.
   *
   * @default {the policy's apiMode}
   */
  apiMode?: string;
}

/**
 * Which lossy mechanisms an agent may use, decided once at start-up from
 * `config.yaml`. While the gate is armed the only allowed lossy path is a
 * host compression preceded by {@linkcode checkpointBeforeCompression}.
 *
 * @category Context safety
 */
export interface CompactionPolicy {
  /** `compression.checkpoint_required` is on. */
  readonly gateArmed: boolean;
  /** The API mode the policy was made for. */
  readonly apiMode: string;
  /** Request native server compaction (`compression.codex_responses_native`); `false` while armed. */
  readonly nativeServerCompaction: boolean;
  /** Run micro-compaction (`compression.micro_compact`); `false` while armed. */
  readonly microCompaction: boolean;
  /**
   * Fails closed before a turn in an API mode that compacts without a
   * checkpoint boundary while the gate is armed.
   *
   * @throws {CompressionCheckpointUnavailable} When the turn must not run.
   */
  assertTurnAllowed(options?: AssertTurnAllowedOptions): void;
}

/**
 * Decides at start-up which compaction mechanisms the agent may use, so the
 * armed gate cannot be bypassed (src/context/SPEC.md §6).
 *
 * @throws {CompressionCheckpointUnavailable} When the gate is armed and
 * the API mode compacts without a checkpoint boundary.
 *
 * @category Context safety
 */
export function compactionPolicyFromConfig(
  config: HermesConfig,
  options: CompactionPolicyOptions = {},
): CompactionPolicy {
  const gateArmed = isCheckpointGateArmed(config);
  const apiMode = options.apiMode ?? "";
  const assertTurnAllowed = (turn: AssertTurnAllowedOptions = {}): void => {
    const mode = turn.apiMode ?? apiMode;
    if (gateArmed && CHECKPOINTLESS_API_MODES.has(mode)) {
      throw new CompressionCheckpointUnavailable(
        CHECKPOINT_BLOCK_REASONS.checkpointlessApiMode,
      );
    }
  };
  assertTurnAllowed();
  return Object.freeze({
    gateArmed,
    apiMode,
    nativeServerCompaction: !gateArmed &&
      configFlag(lookupConfig(config, NATIVE_COMPACTION_KEY), false),
    microCompaction: !gateArmed &&
      configFlag(lookupConfig(config, MICRO_COMPACTION_KEY), false),
    assertTurnAllowed,
  });
}

/** Whether the manager's probe says a provider implements checkpoint API v2 (`false` without a probe); throws what the probe throws. */
async function probeCheckpoint(
  manager: CheckpointManager | null | undefined,
): Promise<boolean> {
  return typeof manager?.supportsPreCompressCheckpoint === "function" &&
    await manager.supportsPreCompressCheckpoint(
        PRE_COMPRESS_CHECKPOINT_API_VERSION,
      ) === true;
}

function sanitized(text: unknown): string {
  if (typeof text !== "string" || text.trim() === "") return "";
  return sanitizeContext(text);
}

function providerLabel(manager: CheckpointManager | null | undefined): string {
  let names: string[] = [];
  try {
    names = (manager?.providers ?? []).map((p) => p.name)
      .filter((n): n is string => typeof n === "string" && n.trim() !== "")
      .map((n) => n.trim());
  } catch {
    // A provider list that throws: none named.
  }
  return names.length > 0 ? names.join(", ") : "no active provider";
}

function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || "Error";
  return typeof error;
}

/** An error's text for a log line, secrets masked. */
function errorMessage(error: unknown): string {
  return redactText(errorText(error));
}
