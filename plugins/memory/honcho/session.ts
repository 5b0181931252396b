/**
 * The Honcho session of a provider (plugins/memory/honcho/SPEC.md §3–§5): its name and
 * peers, its set-up on the server, and its readiness.
 *
 * - **Naming** ({@linkcode HonchoSession.name}) is local work — config,
 *   cwd, `git` for `per-repo` — and may await; until it is done
 *   {@linkcode HonchoSession.identity} is `undefined` (the write hooks keep
 *   the turns handed over meanwhile, in order, see `write_hooks.ts`).
 * - **Set-up** ({@linkcode HonchoSession.ensure}) gets or creates the
 *   session with the configured observation switches, adopts the switches
 *   Honcho already holds, and then runs the one-time joins planned for
 *   other authors and a2a sessions. It is single-flight; hooks start it in
 *   the background with {@linkcode HonchoSession.kick}, throttled to one
 *   attempt per `initRetryDelayMs`.
 * - **Readiness**: turns handed over before the session is ready are
 *   durable in the outbox already; their delivery runs `ensure()` first, so
 *   Honcho never creates the session with default settings. Recall returns
 *   notices until then. When set-up succeeds, `onReady` is called (the
 *   provider starts a late base-layer fetch and the dialectic prewarm, and
 *   resumes delivery).
 * - **Epochs**: {@linkcode HonchoSession.epoch} changes when the provider
 *   moves to another Hermes session or stops; background results fetched
 *   for an older epoch are discarded.
 *
 * @module
 */

import {
  type InitializeOptions,
  log,
  resolveAgentCwd,
} from "../../../src/provider/mod.ts";
import type { SessionPeerConfig } from "./client.ts";
import {
  type HonchoConfig,
  loadHonchoConfig,
  type LoadHonchoConfigOptions,
} from "./config.ts";
import { describeHonchoError, HonchoError, isHonchoError } from "./errors.ts";
import {
  mergeServerObservation,
  type SessionObservation,
} from "./observation.ts";
import { resolveAiPeerId, resolveUserPeerId } from "./peers.ts";
import {
  gatewaySessionKeyFor,
  type GitTopLevel,
  honchoSessionId,
  resolveSessionKey,
} from "./session_naming.ts";
import { type HonchoRuntime, waitFor } from "./_runtime.ts";
import { errorText } from "./_util.ts";

/** The Honcho session and peers a provider writes to and reads from. */
export interface HonchoSessionIdentity {
  /** The resolved session name (plugins/memory/honcho/SPEC.md §3), before id sanitising. */
  sessionKey: string;
  /** The Honcho session id. */
  sessionId: string;
  /** The user peer. */
  userPeerId: string;
  /** The AI peer. */
  aiPeerId: string;
  /** The runtime user ids the host passed (`userId`, `userIdAlt`). */
  runtimeIds: string[];
}

/** Options of {@linkcode HonchoSession}. */
export interface HonchoSessionOptions {
  /** The Hermes session id. */
  sessionId: string;
  /** What the host passed to `initialize` (cwd, title, user ids, gateway key). */
  initOptions: InitializeOptions;
  /** Finds the git top level for `per-repo` naming (tests). */
  gitTopLevel?: GitTopLevel;
  /** Least time between two set-up attempts started by hooks, in ms. @default {5000} */
  initRetryDelayMs?: number;
  /**
   * Called once set-up succeeded; `stale` when the epoch changed while it
   * ran (a session switch or a shutdown).
   */
  onReady?: (stale: boolean) => void;
  /** Called when a switch moved to another Honcho session (it is not ready). */
  onMoved?: () => void;
}

/** The session, its peers and their set-up on the server (see the module doc). */
export class HonchoSession {
  #rt: HonchoRuntime;
  #observerLimitWarned = false;
  #options: HonchoSessionOptions;
  #hermesSessionId: string;
  #identity: HonchoSessionIdentity | undefined;
  #naming: Promise<HonchoSessionIdentity | undefined> | undefined;
  #peerError: HonchoError | undefined;
  #ready = false;
  #initRun: Promise<void> | undefined;
  #lastInitAttempt = Number.NEGATIVE_INFINITY;
  #observation: SessionObservation | undefined;
  #setups = new Map<string, () => Promise<void>>();
  #joined = new Set<string>();
  #epoch: object = {};

  /**
   * Creates the session (no I/O; call {@linkcode HonchoSession.name}).
   *
   * @param runtime What the provider's parts share.
   * @param options The Hermes session, naming inputs and readiness callbacks.
   */
  constructor(runtime: HonchoRuntime, options: HonchoSessionOptions) {
    this.#rt = runtime;
    this.#options = options;
    this.#hermesSessionId = options.sessionId;
  }

  /** The resolved name and peers, once naming succeeded. */
  get identity(): HonchoSessionIdentity | undefined {
    return this.#identity;
  }

  /** Whether the session is set up on the server. */
  get ready(): boolean {
    return this.#ready;
  }

  /** The set-up attempt in flight, if any (it never rejects). */
  get settingUp(): Promise<void> | undefined {
    return this.#initRun;
  }

  /** The observation switches in effect, once set up (Honcho's merged over the config's). */
  get observation(): SessionObservation | undefined {
    return this.#observation;
  }

  /** The current epoch (changes on a switch and at shutdown). */
  get epoch(): object {
    return this.#epoch;
  }

  /**
   * Starts the session for `initialize`: naming, then set-up per
   * `recallMode` — in the background for `hybrid` and `context`; awaited
   * (at most the request timeout) for `tools` with `initOnSessionStart`;
   * on the first tool call or delivery otherwise.
   *
   * @returns Resolves when the awaited part is done (never rejects).
   */
  async start(): Promise<void> {
    this.name();
    const config = this.#rt.config;
    if (config.recallMode !== "tools") {
      this.kick(true);
    } else if (config.initOnSessionStart) {
      await waitFor(
        this.ensure(this.#rt.signal).catch(() => {}),
        this.#rt.timeoutMs,
      );
    }
  }

  /**
   * (Re)names the session for the current Hermes session id: the session
   * key and peers (plugins/memory/honcho/SPEC.md §3–§4). A missing user peer reports the `no-peer`
   * notice; any other failure logs a warning. Never rejects.
   *
   * @returns The identity, or `undefined` when the session cannot be named.
   */
  name(): Promise<HonchoSessionIdentity | undefined> {
    this.#naming = this.#resolve();
    return this.#naming;
  }

  /**
   * The naming in flight (or done).
   *
   * @returns What {@linkcode HonchoSession.name} resolves to.
   */
  named(): Promise<HonchoSessionIdentity | undefined> {
    return this.#naming ?? Promise.resolve(this.#identity);
  }

  /**
   * Starts set-up in the background unless it is running, done, throttled
   * (`initRetryDelayMs` since the last attempt, unless `force`), the user
   * peer is missing or the provider stops.
   *
   * @param force Ignore the throttle.
   */
  kick(force = false): void {
    if (
      this.#ready || this.#initRun || this.#rt.stopped() || this.#peerError
    ) return;
    const retryMs = this.#options.initRetryDelayMs ?? 5_000;
    if (!force && this.#rt.now() - this.#lastInitAttempt < retryMs) return;
    this.#rt.tasks.track(this.ensure(this.#rt.signal).catch(() => {}));
  }

  /**
   * Makes sure the session exists with its observation config, then runs
   * the planned joins (other authors, a2a sessions); single-flight.
   *
   * @param signal Cancels the requests.
   * @returns Resolves when ready.
   * @throws The set-up failure (also reported as a notice).
   */
  async ensure(signal: AbortSignal): Promise<void> {
    if (this.#ready) {
      await this.#runSetups(signal);
      return;
    }
    if (!this.#initRun) {
      this.#lastInitAttempt = this.#rt.now();
      const run = this.#setUp(signal);
      this.#initRun = run;
      run.then(() => {}, () => {}).finally(() => {
        if (this.#initRun === run) this.#initRun = undefined;
      });
    }
    await this.#initRun;
    await this.#runSetups(signal);
  }

  /**
   * Moves to another Hermes session: a new epoch at once, then the session
   * is renamed; when the Honcho session changed it is no longer ready
   * (`onMoved` is called). A gateway key keeps the Honcho session.
   *
   * @param sessionId The Hermes session switched to (`""`: epoch only).
   * @returns Whether the Honcho session changed.
   */
  async switchTo(sessionId: string): Promise<boolean> {
    this.#epoch = {};
    if (!sessionId) return false;
    this.#hermesSessionId = sessionId;
    const before = this.#identity?.sessionId;
    const after = await this.name();
    if (!after || after.sessionId === before) return false;
    this.#ready = false;
    this.#observation = undefined;
    this.#options.onMoved?.();
    return true;
  }

  /** Starts a new epoch without moving (shutdown). */
  stop(): void {
    this.#epoch = {};
  }

  /**
   * Plans a one-time server set-up for an author peer (joined to `session`
   * with the user's observation switches) or an a2a session (created with
   * the author and the AI peer); it runs before the next delivery.
   *
   * @param session The Honcho session.
   * @param peer The author's peer.
   * @param aiPeer The AI peer.
   * @param create Create the session (a2a) instead of joining it.
   */
  planJoin(
    session: string,
    peer: string,
    aiPeer: string,
    create: boolean,
  ): void {
    const key = `${session}\u0000${peer}`;
    if (this.#setups.has(key) || this.#joined.has(key)) return;
    const client = this.#rt.client;
    const flags = this.#observation ?? this.#rt.config.observationFlags;
    const userConfig: SessionPeerConfig = {
      observeMe: flags.user.observeMe,
      observeOthers: flags.user.observeOthers,
    };
    this.#setups.set(key, async () => {
      const signal = this.#rt.signal;
      if (create) {
        await client.getOrCreateSession(session, {
          peers: {
            [peer]: userConfig,
            [aiPeer]: {
              observeMe: flags.ai.observeMe,
              observeOthers: flags.ai.observeOthers,
            },
          },
          signal,
        });
      } else {
        await client.addSessionPeers(session, { [peer]: userConfig }, {
          signal,
        });
      }
      this.#joined.add(key);
    });
  }

  /**
   * Whether the AI peer observes the others (Honcho's switch once set up,
   * else the configured one): reads and conclusions then take its view.
   *
   * @returns The switch.
   */
  aiObservesOthers(): boolean {
    return (this.#observation?.ai ?? this.#rt.config.observationFlags.ai)
      ?.observeOthers ?? true;
  }

  async #resolve(): Promise<HonchoSessionIdentity | undefined> {
    const config = this.#rt.config;
    const options = this.#options.initOptions;
    const runtimeIds = [options.userId, options.userIdAlt].filter(
      (id): id is string => typeof id === "string" && id.trim() !== "",
    ).map((id) => id.trim());
    try {
      const userPeerId = resolveUserPeerId(config, { runtimeIds });
      const sessionKey = await resolveSessionKey(config, {
        cwd: typeof options.cwd === "string" && options.cwd
          ? options.cwd
          : safeAgentCwd(),
        sessionTitle: options.sessionTitle,
        sessionTitleSource: options.sessionTitleSource,
        sessionId: this.#hermesSessionId,
        // The gateway's key first, as Hermes does; a host that gives the
        // chat but not the key gets the key Hermes' gateway would build.
        gatewaySessionKey: options.gatewaySessionKey ??
          gatewaySessionKeyFor(options),
        gitTopLevel: this.#options.gitTopLevel,
      });
      const identity: HonchoSessionIdentity = {
        sessionKey,
        sessionId: honchoSessionId(sessionKey),
        userPeerId,
        aiPeerId: resolveAiPeerId(config),
        runtimeIds,
      };
      this.#identity = identity;
      this.#peerError = undefined;
      return identity;
    } catch (error) {
      if (isHonchoError(error, "no_peer")) {
        this.#peerError = error;
        this.#rt.notices.report("no-peer");
      } else {
        log(
          "warn",
          `Honcho cannot name the session: ${this.#rt.scrub(errorText(error))}`,
        );
      }
      this.#identity = undefined;
      return undefined;
    }
  }

  async #setUp(signal: AbortSignal): Promise<void> {
    const identity = await (this.#naming ?? this.name());
    if (!identity) {
      throw this.#peerError ??
        new HonchoError("config", "Honcho session could not be named");
    }
    const client = this.#rt.client;
    const epoch = this.#epoch;
    const flags = this.#rt.config.observationFlags;
    try {
      const peers: Record<string, SessionPeerConfig> = {
        [identity.userPeerId]: {
          observeMe: flags.user.observeMe,
          observeOthers: flags.user.observeOthers,
        },
      };
      if (identity.aiPeerId !== identity.userPeerId) {
        peers[identity.aiPeerId] = {
          observeMe: flags.ai.observeMe,
          observeOthers: flags.ai.observeOthers,
        };
      }
      await client.getOrCreateSession(identity.sessionId, { peers, signal });
      const [userServer, aiServer] = await Promise.all([
        client.getSessionPeerConfig(identity.sessionId, identity.userPeerId, {
          signal,
        }).catch(() => undefined),
        identity.aiPeerId === identity.userPeerId
          ? Promise.resolve(undefined)
          : client.getSessionPeerConfig(identity.sessionId, identity.aiPeerId, {
            signal,
          }).catch(() => undefined),
      ]);
      if (this.#identity?.sessionId !== identity.sessionId) return;
      this.#observation = {
        user: mergeServerObservation(flags.user, serverFlags(userServer)),
        ai: mergeServerObservation(flags.ai, serverFlags(aiServer)),
      };
      this.#ready = true;
      this.#rt.notices.clear();
    } catch (error) {
      const cause = this.#rt.notices.reportError(error);
      if (cause === "observer-limit" && !this.#observerLimitWarned) {
        // A refusal retrying cannot fix: one warning per provider, naming
        // the session, the AI peer and the setting to change.
        this.#observerLimitWarned = true;
        log(
          "warn",
          this.#rt.notices.warning(
            cause,
            `session ${identity.sessionId}, AI peer ${identity.aiPeerId}: ${
              this.#rt.scrub(describeHonchoError(error))
            }`,
          ),
        );
      }
      log(
        "debug",
        `Honcho session init failed: ${this.#rt.scrub(errorText(error))}`,
      );
      throw error;
    }
    this.#options.onReady?.(epoch !== this.#epoch);
  }

  async #runSetups(signal: AbortSignal): Promise<void> {
    for (const [key, setup] of [...this.#setups]) {
      if (signal.aborted) throw signal.reason;
      await setup();
      this.#setups.delete(key);
    }
  }
}

function serverFlags(
  config: SessionPeerConfig | undefined,
): { observeMe: boolean | null; observeOthers: boolean | null } | undefined {
  if (!config) return undefined;
  return {
    observeMe: config.observeMe ?? null,
    observeOthers: config.observeOthers ?? null,
  };
}

function safeAgentCwd(): string | undefined {
  try {
    return resolveAgentCwd();
  } catch {
    return undefined;
  }
}

/** A computed identity signature and the config-file stamp it was computed for. */
export interface IdentitySignature {
  /** The config file's path, modification time and size (or `:missing`). */
  stamp: string;
  /** The identity-affecting settings. */
  value: Record<string, unknown>;
}

/**
 * The identity-affecting settings (workspace, peers, naming flags) of the
 * profile's config: a change means another Honcho identity, so the
 * gateway's cached agent is rebuilt. `previous` is reused while the config
 * file's modification time and size are unchanged.
 *
 * @param load Where the config is.
 * @param previous The last result, if any.
 * @returns The signature with its stamp.
 * @throws When the config cannot be loaded.
 */
export async function identitySignatureOf(
  load: LoadHonchoConfigOptions,
  previous?: IdentitySignature,
): Promise<IdentitySignature> {
  const config: HonchoConfig = await loadHonchoConfig(load);
  let stamp = `${config.configPath}:missing`;
  try {
    const info = await Deno.stat(config.configPath);
    stamp = `${config.configPath}:${info.mtime?.getTime()}:${info.size}`;
  } catch {
    // Missing file: env-only settings.
  }
  if (previous?.stamp === stamp) return previous;
  return {
    stamp,
    value: {
      workspace: config.workspaceId,
      peerName: config.peerName ?? null,
      aiPeer: config.aiPeer,
      pinUserPeer: config.pinUserPeer,
      runtimePeerPrefix: config.runtimePeerPrefix,
      userPeerAliases: { ...config.userPeerAliases },
      sessionPeerPrefix: config.sessionPeerPrefix,
      sessionAiPeerPrefix: config.sessionAiPeerPrefix,
      a2aSessions: config.a2aSessions,
    },
  };
}
