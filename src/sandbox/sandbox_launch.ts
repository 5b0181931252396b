// Starting a provider's sandbox (a `deno run` process or a confined worker:
// `transport.ts`) and loading the provider in it.

import { fileURLToPath, join, pathToFileURL } from "../_util/path.ts";
import { syncDirectory } from "../io/atomic_write.ts";
import { log } from "../core/log.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import type { SkillRegistration } from "../core/plugin_context.ts";
import { type ProviderGrant, realPathOf, type SandboxTarget } from "./grant.ts";
import { getConfigPath } from "../config/config.ts";
import {
  chooseTransport,
  openChannel,
  type SandboxTransport,
} from "./transport.ts";
import { type DenialReporter, floorOfGrant } from "./denial.ts";
import {
  currentSecretScope,
  isMultiplexActive,
} from "../profile/secret_scope.ts";
import type { ProviderDescription, WorkerMessage } from "./worker_protocol.ts";
import { WorkerRpc } from "./worker_rpc.ts";

/** Which worker entry a provider gets. */
export type SandboxFramework = "provider" | "full";

/** Options of {@linkcode SandboxedMemoryProvider.start}. */
export interface SandboxStartOptions {
  /** The grant the worker runs with (from `grantForCandidate`). */
  grant: ProviderGrant;
  /**
   * The provider's own sections of `config.yaml`, handed to it as
   * `ctx.hermesConfig`.
   */
  config?: HermesConfig;
  /**
   * What the worker preloads: `provider` (`@hermes/memory/provider`, the
   * fast default) or `full` (the whole framework, for providers that import
   * `@hermes/memory`).
   *
   * @default {`full` when the provider's own files import `@hermes/memory`, else `provider`}
   */
  framework?: SandboxFramework;
  /**
   * How the sandbox is carried: `process` (its own `deno run` child, the
   * default) or `worker` (the default only in a `deno compile` binary).
   *
   * @default {chooseTransport()}
   */
  transport?: SandboxTransport;
  /**
   * The heap cap of a sandbox process, in MiB: a provider that needs more
   * ends (its process only) instead of taking the host down.
   *
   * @default {512}
   */
  heapLimitMb?: number;
  /** Called for each skill the provider registers in `register(ctx)`. */
  onSkill?: (skill: SkillRegistration) => void;
  /** Called each time its sandbox is started, before the provider has loaded. */
  onStarted?: () => void;
  /**
   * Create the grant's data folder when it is missing (`false` for loads
   * that only inspect the provider: they write nothing).
   *
   * @default {true}
   */
  createDataDir?: boolean;
  /**
   * How long loading (worker start, import, `register`) may take.
   *
   * @default {30000}
   */
  loadTimeoutMs?: number;
  /**
   * How long the first worker may take to start listening before a second
   * replaces it (Deno 2.9 occasionally never starts a worker).
   *
   * @default {5000}
   */
  startTimeoutMs?: number;
  /**
   * How long one call may take, waiting for earlier casts included.
   *
   * @default {30000}
   */
  callTimeoutMs?: number;
  /**
   * How long the worker lets one cast run before abandoning it as failed.
   *
   * @default {callTimeoutMs}
   */
  castTimeoutMs?: number;
  /**
   * How long the worker may leave a ping unanswered before it is declared stuck.
   *
   * @default {5000}
   */
  unresponsiveAfterMs?: number;
  /**
   * How long `shutdown()` waits in all for queued casts and the provider's
   * `shutdown` before the worker is terminated anyway.
   *
   * @default {5000}
   */
  shutdownTimeoutMs?: number;
}

/** A started sandbox with its provider loaded (`null`: none offered). */
export interface Launched {
  rpc: WorkerRpc;
  description: ProviderDescription | null;
}

const WORKER_URLS: Record<SandboxFramework, URL> = {
  provider: new URL("../provider/worker_bootstrap.ts", import.meta.url),
  full: new URL("../provider/worker_bootstrap_full.ts", import.meta.url),
};

/**
 * A bootstrap through its real path: discovery resolves links, so a
 * provider of a symlinked install imports the framework through the real
 * path, and must find the very modules the bootstrap loaded (a second copy
 * would need a read grant on the framework, which no provider gets).
 */
export function realEntry(url: URL): URL {
  const real = url.protocol === "file:" && realPathOf(fileURLToPath(url));
  return real ? pathToFileURL(real) : url;
}

/**
 * Creates the data directory a grant names (mode 0700), refusing a symlink.
 *
 * @throws {Error} When it is a symlink or not a directory.
 */
export async function prepareDataDir(
  grant: ProviderGrant,
  create = true,
): Promise<void> {
  const dir = grant.dataDir;
  if (dir === undefined) return;
  try {
    const info = await Deno.lstat(dir);
    if (info.isSymlink) {
      throw new Error(
        `its data directory ${dir} is a symlink, which would widen its sandbox: replace it with a directory`,
      );
    }
    if (!info.isDirectory) {
      throw new Error(
        `its data directory ${dir} exists and is not a directory: move that file away`,
      );
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    if (!create) return;
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    // Make the new entry durable: the provider cannot sync the profile home.
    await syncDirectory(join(dir, ".."));
  }
}

/**
 * Resolves every approved path of a grant with this process's own access,
 * right before its sandbox starts: a path that now leads into the floor (a
 * symbolic link made after the approval) stops the start.
 *
 * @throws {Error} Naming the entry, the link and where it leads.
 */
export function checkGrantAtStart(grant: ProviderGrant): void {
  for (const access of ["read", "write"] as const) {
    for (const { value, from } of grant[access]) {
      // Its own code and data are checked where they are made.
      const mine = from === "provider-dir" || from === "data-dir";
      const why = mine ? undefined : floorOfGrant(grant, value, access, true);
      if (why === undefined) continue;
      throw new Error(
        `Memory provider '${grant.provider}' was not started: its ${access} grant ${value} is refused now: ${why}; a memory provider is never granted it. Point it back where you approved it, or remove it from memory.permissions.${grant.provider} in ${
          getConfigPath(grant.hermesHome)
        }`,
      );
    }
  }
}

/** Where a launched sandbox's events and unexpected stops go. */
export interface LaunchHooks {
  denials: DenialReporter;
  /** An event after the bootstrap started (not a log line or a skill). */
  event(message: WorkerMessage): void;
  stopped(): void;
}

/** Starts a provider's sandbox and loads the provider; again after each pause under the live cap. */
export function sandboxLauncher(
  candidate: SandboxTarget,
  options: SandboxStartOptions,
  framework: SandboxFramework,
  hooks: LaunchHooks,
): () => Promise<Launched> {
  const grant = options.grant;
  const entry = realEntry(WORKER_URLS[framework]);
  const transport = chooseTransport(options.transport);
  // A worker replaced because it never started stops quietly.
  let replacing = false;
  let lastStop: string | undefined;
  const spawn = (): WorkerRpc => {
    const channel = openChannel(transport, {
      entry,
      grant,
      frameworkNpm: framework === "full",
      heapLimitMb: options.heapLimitMb,
    }, `memory-provider-${candidate.name}`);
    return new WorkerRpc(channel, {
      provider: candidate.name,
      unresponsiveAfterMs: options.unresponsiveAfterMs,
      onEvent: (message) => {
        if (message.t === "skill") options.onSkill?.(message.skill);
        else if (message.t === "log") log(message.level, message.message);
        else hooks.event(message);
      },
      onStopped: (reason) => {
        hooks.stopped();
        if (replacing) return;
        // A restarted process that ends the same way is not news: one warning.
        const again = reason === lastStop;
        lastStop = reason;
        log(
          again ? "debug" : "warn",
          `Memory provider '${candidate.name}' stopped: ${reason}`,
        );
      },
    });
  };
  const loadTimeoutMs = options.loadTimeoutMs ?? 30_000;
  const callTimeoutMs = options.callTimeoutMs ?? 30_000;
  const startTimeoutMs = Math.min(
    options.startTimeoutMs ?? 5000,
    loadTimeoutMs,
  );
  /** Starts a sandbox and loads the provider in it (again after a stop). */
  const launch = async (): Promise<Launched> => {
    checkGrantAtStart(grant);
    const startedAt = Date.now();
    const load = (rpc: WorkerRpc): Promise<unknown> =>
      rpc.request({
        t: "load",
        specifier: candidate.specifier,
        providerName: candidate.name,
        acceptInstances: candidate.source === "package",
        context: {
          hermesHome: grant.hermesHome,
          multiplex: isMultiplexActive(),
          scope: limitScope(grant),
        },
        castTimeoutMs: options.castTimeoutMs ?? callTimeoutMs,
        config: options.config ?? {},
      }, {
        timeoutMs: Math.max(1, loadTimeoutMs - (Date.now() - startedAt)),
        label: "load",
        adaptive: true,
      });
    // Posted at once (read when the bootstrap listens): saves a round trip.
    let rpc = spawn();
    let pending = load(rpc);
    options.onStarted?.();
    let description: ProviderDescription | null;
    try {
      try {
        // Only a worker may silently never start (a process's start is
        // covered by the load timeout).
        replacing = transport === "worker" &&
          startTimeoutMs < loadTimeoutMs;
        if (transport === "worker") await rpc.ready(startTimeoutMs);
      } catch (error) {
        // Only a worker that never started is replaced; a bootstrap that
        // failed would fail again.
        if (!replacing || !/did not start/.test(rpc.stopped ?? "")) {
          throw error;
        }
        pending.catch(() => {});
        log(
          "debug",
          `Memory provider '${candidate.name}': its sandbox worker did not start within ${startTimeoutMs} ms; starting a new one`,
        );
        rpc.terminate("it did not start");
        replacing = false;
        rpc = spawn();
        pending = load(rpc);
      } finally {
        replacing = false;
      }
      description = await pending as ProviderDescription | null;
    } catch (error) {
      rpc.terminate("its load failed");
      throw hooks.denials.explain(error);
    }
    if (description === null) rpc.terminate("it offers no provider");
    return { rpc, description };
  };
  return launch;
}

/** The caller's secret scope limited to the names the grant holds. */
export function limitScope(
  grant: ProviderGrant,
): Record<string, string> | undefined {
  const scope = currentSecretScope();
  if (scope === undefined) return undefined;
  const limited: Record<string, string> = {};
  for (const entry of grant.env) {
    if (Object.hasOwn(scope, entry.value)) {
      limited[entry.value] = scope[entry.value] as string;
    }
  }
  return limited;
}
