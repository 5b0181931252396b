/**
 * The one place that reads the process environment, so a permission-confined
 * worker meets environment reads only where expected and never at import.
 * Reads never throw: a variable without an `--allow-env` grant reads as
 * `undefined`.
 *
 * @module
 */

/** `read()`, or `denied` when it throws (a missing `--allow-env` grant). */
function orDenied<T>(read: () => T, denied: T): T {
  try {
    return read();
  } catch {
    return denied;
  }
}

/** Reads one variable of the process environment. */
export function readProcessEnv(name: string): string | undefined {
  return orDenied(() => Deno.env.get(name), undefined);
}

/** The whole process environment; `undefined` without the unscoped `--allow-env` that takes. */
export function readWholeProcessEnv(): Record<string, string> | undefined {
  return orDenied(() => Deno.env.toObject(), undefined);
}

/** Tells whether the process may read a variable ({@linkcode readProcessEnv} reads a denied one as unset). */
export function isProcessEnvReadable(name: string): boolean {
  return orDenied(() => (Deno.env.get(name), true), false);
}

/** Tells whether a variable holds a truthy switch: `1`, `true`, `yes` or `on`, any case, trimmed. */
export function isTruthyEnvValue(value: string | undefined | null): boolean {
  if (value == null) return false;
  return ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}

/**
 * Runs `fn` synchronously with `process.env` reads of ungranted variables
 * giving `undefined` instead of throwing: npm libraries probe debug variables
 * on hot paths (`yaml` reads `LOG_TOKENS` per token). Only the property is
 * swapped, for the call; the environment is never changed.
 */
export function withTolerantProcessEnv<T>(fn: () => T): T {
  const allGranted = orDenied(
    () => Deno.permissions.querySync({ name: "env" }).state === "granted",
    false,
  );
  if (allGranted) return fn();
  // Node's `process` is looked up only here: initialising it costs a fresh
  // process or worker ~30 ms, which every importer of this module would pay.
  const process = nodeProcess();
  const original = process.env;
  const cache = new Map<string, string | undefined>();
  const tolerant = new Proxy({} as Record<string, string | undefined>, {
    get(_target, key): string | undefined {
      if (typeof key !== "string") return undefined;
      if (!cache.has(key)) cache.set(key, readProcessEnv(key));
      return cache.get(key);
    },
    has(_target, key): boolean {
      return typeof key === "string" && readProcessEnv(key) !== undefined;
    },
    set(): boolean {
      return false;
    },
  });
  process.env = tolerant;
  try {
    return fn();
  } finally {
    process.env = original;
  }
}

function nodeProcess(): { env: unknown } {
  return (globalThis as unknown as { process: { env: unknown } }).process;
}

/**
 * Makes `Deno.env` read-only for the rest of this realm (a sandbox worker
 * shares the process's environment with the host); `set` and `delete` call
 * `refuse`, which throws. Not reversible.
 */
export function lockProcessEnvironment(refuse: () => never): void {
  const env = Deno.env;
  Object.defineProperty(Deno, "env", {
    value: Object.freeze({
      get: (key: string): string | undefined => env.get(key),
      has: (key: string): boolean => env.has(key),
      toObject: (): Record<string, string> => env.toObject(),
      set: refuse,
      delete: refuse,
    }),
    writable: false,
    configurable: false,
    enumerable: true,
  });
}

const pathJoin = (...parts: string[]): string =>
  parts.join(Deno.build.os === "windows" ? "\\" : "/");

/** The platform's per-user cache directory (where Deno puts its own), or `undefined` without a home. */
function userCacheDir(): string | undefined {
  const os = Deno.build.os;
  const home = readProcessEnv("HOME") || readProcessEnv("USERPROFILE");
  if (os === "windows") return readProcessEnv("LOCALAPPDATA");
  if (os === "darwin") {
    return home ? pathJoin(home, "Library", "Caches") : undefined;
  }
  return readProcessEnv("XDG_CACHE_HOME") ||
    (home ? pathJoin(home, ".cache") : undefined);
}

/**
 * Deno's own cache directory, as Deno finds it (`DENO_DIR`, else the
 * platform's cache directory).
 */
export function denoCacheDir(): string | undefined {
  const base = userCacheDir();
  return readProcessEnv("DENO_DIR") || (base && pathJoin(base, "deno"));
}

/** This module's cache (`tools/deno`'s pinned Deno, the launcher's records), not created. */
export function hermesCacheDir(): string | undefined {
  const base = userCacheDir();
  return base && pathJoin(base, "hermes-memory");
}
