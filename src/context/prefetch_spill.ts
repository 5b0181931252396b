// Oversized-output spilling (`hooks.output_spill`) and the prefetch-recall
// policy built on it (src/context/SPEC.md §3–§4). Lengths count code points,
// as Hermes does, so a surrogate pair is never split.

import { dirname, isAbsolute, join, resolve } from "../_util/path.ts";
import { getHermesHome, getUserHome } from "../profile/hermes_home.ts";
import { log } from "../core/log.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import { isRecord } from "../_util/is_record.ts";
import { writeAll } from "../io/atomic_write.ts";
import { codePointLength, formatThousands } from "../_util/python_text.ts";
import {
  configFlag,
  configInt,
  lookupConfig,
} from "../config/config_values.ts";

const DEFAULT_SPILL_MAX_CHARS = 10000;
const DEFAULT_SPILL_PREVIEW_HEAD = 500;
const DEFAULT_SPILL_PREVIEW_TAIL = 500;
const MIN_RECALL_CEILING_CHARS = 100000;
const RECALL_CEILING_FACTOR = 10;

/** `hooks.output_spill`, validated; `directory: null` is `<HERMES_HOME>/hook_outputs`. */
interface OutputSpillSettings {
  readonly enabled: boolean;
  readonly maxChars: number;
  readonly previewHead: number;
  readonly previewTail: number;
  readonly directory: string | null;
}

/** A snapshot taken when the provider registers: later config edits do not change a running agent. */
export interface RecallSpillPolicy {
  /** `memory.prefetch_spill_enabled` and `hooks.output_spill.enabled` both on. */
  readonly spillEnabled: boolean;
  readonly settings: OutputSpillSettings;
  readonly directory: string;
  /** Applied when spilling is off: `max(10 × maxChars, 100000)` characters. */
  readonly ceilingChars: number;
}

class SpillDirectoryError extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
    this.name = "SpillDirectoryError";
  }
}

/** Reads `hooks.output_spill`; a missing section or bad value falls back to the default. */
export function readOutputSpillSettings(
  config: HermesConfig,
): OutputSpillSettings {
  const section = lookupConfig(config, "hooks.output_spill");
  const raw = isRecord(section) ? section : {};
  const directory = typeof raw.directory === "string" &&
      raw.directory.trim() !== ""
    ? expandUser(raw.directory.trim())
    : null;
  return Object.freeze({
    enabled: configFlag(raw.enabled, true),
    maxChars: configInt(raw.max_chars, DEFAULT_SPILL_MAX_CHARS, 1),
    previewHead: configInt(raw.preview_head, DEFAULT_SPILL_PREVIEW_HEAD, 0),
    previewTail: configInt(raw.preview_tail, DEFAULT_SPILL_PREVIEW_TAIL, 0),
    directory,
  });
}

/** The absolute spill directory (a relative one is under `HERMES_HOME`). */
export function resolveSpillDirectory(
  settings: OutputSpillSettings,
  options: { hermesHome?: string } = {},
): string {
  const home = resolve(options.hermesHome ?? getHermesHome());
  if (settings.directory === null) return join(home, "hook_outputs");
  return isAbsolute(settings.directory)
    ? resolve(settings.directory)
    : resolve(home, settings.directory);
}

/** Snapshots the recall policy when an external provider registers (src/context/SPEC.md §4). */
export function recallSpillPolicyFromConfig(
  config: HermesConfig,
  options: { hermesHome?: string } = {},
): RecallSpillPolicy {
  const settings = readOutputSpillSettings(config);
  const optIn = configFlag(
    lookupConfig(config, "memory.prefetch_spill_enabled"),
    false,
  );
  let directory: string;
  try {
    directory = resolveSpillDirectory(settings, options);
  } catch {
    directory = resolve("hook_outputs");
  }
  return Object.freeze({
    spillEnabled: optIn && settings.enabled,
    settings,
    directory,
    ceilingChars: recallCeilingChars(settings.maxChars),
  });
}

export function recallCeilingChars(maxChars: number): number {
  return Math.max(RECALL_CEILING_FACTOR * maxChars, MIN_RECALL_CEILING_CHARS);
}

export function prefetchSpillSource(providerName: string): string {
  return `${providerName} memory prefetch`;
}

/** Spills a prefetch result, or with spilling off cuts it at the ceiling (src/context/SPEC.md §4). */
export async function applyRecallSpill(
  policy: RecallSpillPolicy,
  text: string,
  options: { source: string; sessionId?: string },
): Promise<string> {
  if (typeof text !== "string" || text === "") return "";
  if (policy.spillEnabled) {
    return await spillToDirectory(text, { ...policy, ...options });
  }
  return capAtCeiling(text, policy.ceilingChars, options.source);
}

/** Spills one oversized output to a private file and returns the preview (src/context/SPEC.md §3). */
export async function spillOutput(
  text: string,
  options: {
    settings: OutputSpillSettings;
    source: string;
    sessionId?: string;
    hermesHome?: string;
  },
): Promise<string> {
  if (typeof text !== "string" || text === "") return "";
  let directory: string;
  try {
    directory = resolveSpillDirectory(options.settings, {
      hermesHome: options.hermesHome,
    });
  } catch (error) {
    return buildPreview(text, options.settings, options.source, null, error);
  }
  return await spillToDirectory(text, { ...options, directory });
}

/** A session's spill directory name: `/`, `\` and `..` become `_` (`no-session` when empty). */
export function spillSessionSegment(sessionId?: string): string {
  const raw = sessionId ? String(sessionId) : "no-session";
  const segment = raw.replace(/\.\.|[/\\]/g, "_");
  return segment === "." || segment === "" ? "_" : segment;
}

interface SpillTarget {
  settings: OutputSpillSettings;
  directory: string;
  source: string;
  sessionId?: string;
}

async function spillToDirectory(
  text: string,
  target: SpillTarget,
): Promise<string> {
  const { settings } = target;
  if (!settings.enabled || text.length <= settings.maxChars) return text;
  const total = codePointLength(text);
  if (total <= settings.maxChars) return text;
  let path: string | null = null;
  let failure: unknown = null;
  try {
    path = await writeSpillFile(
      target.directory,
      spillSessionSegment(target.sessionId),
      text,
    );
  } catch (error) {
    failure = error;
  }
  return buildPreview(text, settings, target.source, path, failure, total);
}

function buildPreview(
  text: string,
  settings: OutputSpillSettings,
  source: string,
  path: string | null,
  failure: unknown,
  total: number = codePointLength(text),
): string {
  if (path === null) {
    log(
      "warn",
      `Could not save ${source} output (${
        formatThousands(total)
      } chars) to the spill directory: ${describeError(failure)}`,
    );
  }
  const lines = [
    `[${source} output truncated — ${formatThousands(total)} chars; ${
      path === null
        ? "full content unavailable — spill write failed"
        : `full content saved to ${path}`
    }]`,
  ];
  if (settings.previewHead > 0) {
    lines.push(
      "--- head ---",
      text.slice(0, codePointOffset(text, settings.previewHead)),
    );
  }
  if (settings.previewTail > 0 && total > settings.previewHead) {
    lines.push(
      "--- tail ---",
      text.slice(codePointOffset(text, total - settings.previewTail)),
    );
  }
  return lines.join("\n");
}

function capAtCeiling(text: string, ceiling: number, source: string): string {
  if (text.length <= ceiling) return text;
  const total = codePointLength(text);
  if (total <= ceiling) return text;
  let kept = text.slice(0, codePointOffset(text, ceiling));
  const lastBreak = kept.lastIndexOf("\n");
  if (lastBreak > 0 && lastBreak >= kept.length - Math.ceil(kept.length / 10)) {
    kept = kept.slice(0, lastBreak);
  }
  const keptChars = codePointLength(kept);
  log(
    "warn",
    `${source} returned ${
      formatThousands(total)
    } chars, over the runaway-recall ceiling of ${
      formatThousands(ceiling)
    }; kept the first ${
      formatThousands(keptChars)
    } (set memory.prefetch_spill_enabled: true to keep the full text on disk)`,
  );
  return `${kept}\n[${source} output truncated at the runaway-recall ceiling — kept ${
    formatThousands(keptChars)
  } of ${formatThousands(total)} chars]`;
}

async function writeSpillFile(
  directory: string,
  segment: string,
  text: string,
): Promise<string> {
  await ensurePrivateDirectory(directory, false);
  const sessionDirectory = join(directory, segment);
  await ensurePrivateDirectory(sessionDirectory, true);
  const name = `${crypto.randomUUID().replaceAll("-", "")}.txt`;
  const path = join(sessionDirectory, name);
  const body = new TextEncoder().encode(
    text.endsWith("\n") ? text : `${text}\n`,
  );
  const file = await Deno.open(path, {
    write: true,
    createNew: true,
    mode: 0o600,
  });
  try {
    const info = await file.stat();
    if (!info.isFile) {
      throw new SpillDirectoryError(path, `Spill target ${path} is not a file`);
    }
    await writeAll(file, body);
  } catch (error) {
    file.close();
    await Deno.remove(path).catch(() => {});
    throw error;
  }
  file.close();
  return path;
}

// Creates `target` and missing parents 0700, refusing symbolic links (also one
// raced in). `tighten` makes an existing group/other-open leaf 0700 (the
// session directory; a configured spill directory is left as its owner set it).
async function ensurePrivateDirectory(
  target: string,
  tighten: boolean,
): Promise<void> {
  const absolute = resolve(target);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      await Deno.lstat(current);
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      missing.unshift(current);
      const parent = dirname(current);
      if (parent === current) throw error;
      current = parent;
    }
  }
  for (const path of missing) {
    let created = true;
    try {
      await Deno.mkdir(path, { mode: 0o700 });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      created = false;
    }
    assertRealDirectory(path, await Deno.lstat(path));
    if (created && Deno.build.os !== "windows") await Deno.chmod(path, 0o700);
  }
  if (missing.length === 0) {
    const info = await Deno.lstat(absolute);
    assertRealDirectory(absolute, info);
    if (
      tighten && Deno.build.os !== "windows" && info.mode !== null &&
      (info.mode & 0o077) !== 0
    ) {
      await Deno.chmod(absolute, 0o700);
    }
  }
}

function assertRealDirectory(path: string, info: Deno.FileInfo): void {
  if (info.isSymlink) {
    throw new SpillDirectoryError(
      path,
      `Refusing spill directory ${path}: it is a symbolic link`,
    );
  }
  if (!info.isDirectory) {
    throw new SpillDirectoryError(
      path,
      `Refusing spill directory ${path}: it is not a directory`,
    );
  }
}

// The UTF-16 offset after the first `count` code points (a surrogate pair is one).
function codePointOffset(text: string, count: number): number {
  let units = 0;
  for (const char of text) {
    if (count-- <= 0) break;
    units += char.length;
  }
  return units;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function expandUser(path: string): string {
  if (path === "~" || path.startsWith("~/")) {
    const home = getUserHome();
    if (home) return join(home, path.slice(1));
  }
  return path;
}
