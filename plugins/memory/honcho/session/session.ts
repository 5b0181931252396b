/**
 * The Honcho session (plugins/memory/honcho/SPEC.md §3–§5): naming (may await `git`), single-flight
 * set-up with the observation switches and planned joins, readiness. Delivery runs `ensure()` first,
 * and `prepare()` before the first delivery to any other queued session, so Honcho never creates a
 * session with defaults; a switch or stop changes the epoch and drops older results.
 * @module
 */

import { type InitializeOptions, log } from "../../../../src/provider/mod.ts";
import type { SessionPeerConfig } from "../client/wire.ts";
import type { HonchoClient } from "../client/client.ts";
import {
  type HonchoConfig,
  loadHonchoConfig,
  type LoadHonchoConfigOptions,
} from "../config/config.ts";
import {
  describeHonchoError,
  HonchoError,
  isHonchoError,
} from "../client/errors.ts";
import {
  mergeServerObservation,
  type PeerObservation,
  type SessionObservation,
} from "./observation.ts";
import {
  normalizeRuntimeIds,
  resolveAiPeerId,
  resolveUserPeerId,
} from "./peers.ts";
import {
  gatewaySessionKeyFor,
  type GitTopLevel,
  honchoSessionId,
  resolveSessionKey,
} from "./naming.ts";
import { type HonchoRuntime, waitFor } from "../_runtime.ts";
import { logFailure } from "../_util.ts";

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

export interface HonchoSessionOptions {
  sessionId: string;
  /** What the host passed to `initialize` (cwd, title, user ids, gateway key). */
  initOptions: InitializeOptions;
  /** Finds the git top level for `per-repo` naming (tests). */
  gitTopLevel?: GitTopLevel;
  /** Least time between two set-up attempts started by hooks, in ms. @default {5000} */
  initRetryDelayMs?: number;
  /**
   * Called once the session is named, beside the request creating it: reads need no session
   * (Honcho answers an unknown session's context with 200), so turn 1's go out with it.
   */
  onNamed?: () => void;
  /** Called once set-up succeeded; `stale` when the epoch changed while it ran (a session switch or a shutdown). */
  onReady?: (stale: boolean) => void;
  /** Called when a switch moved to another Honcho session (it is not ready). */
  onMoved?: () => void;
}

export class HonchoSession {
  #rt: HonchoRuntime;
  #observerLimitWarned = false;
  #options: HonchoSessionOptions;
  #hermesSessionId: string;
  #identity: HonchoSessionIdentity | undefined;
  #naming: Promise<HonchoSessionIdentity | undefined> | undefined;
  #peerError: HonchoError | undefined;
  #ready = false;
  /** The session exists on Honcho and its set-up did not fail (ready, or its peer configs are still read back). */
  #exists = false;
  #initRun: Promise<void> | undefined;
  #creating: Promise<void> | undefined;
  #lastInitAttempt = Number.NEGATIVE_INFINITY;
  #observation: SessionObservation | undefined;
  #setups = new Map<string, () => Promise<void>>();
  #joined = new Set<string>();
  /** Sessions set up (or repaired) with their peers' settings in this process. */
  #prepared = new Set<string>();
  #epoch: object = {};

  /** Creates the session (no I/O; call {@linkcode HonchoSession.name}). */
  constructor(runtime: HonchoRuntime, options: HonchoSessionOptions) {
    this.#rt = runtime;
    this.#options = options;
    this.#hermesSessionId = options.sessionId;
  }

  get identity(): HonchoSessionIdentity | undefined {
    return this.#identity;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Whether the session exists on Honcho and its set-up did not fail: reads may go out. */
  get exists(): boolean {
    return this.#exists;
  }

  /** While set-up runs (else `undefined`): settles once the session exists or set-up failed (turn 1 waits for it). */
  get creating(): Promise<void> | undefined {
    return this.#initRun && this.#creating;
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
   * Naming, then set-up: in the background (`hybrid`, `context`), awaited up to the request timeout
   * (`tools` with `initOnSessionStart`), or on the first tool call or delivery.
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

  /** (Re)names the session and peers (plugins/memory/honcho/SPEC.md §3–§4); never rejects. */
  name(): Promise<HonchoSessionIdentity | undefined> {
    this.#naming = this.#resolve();
    return this.#naming;
  }

  named(): Promise<HonchoSessionIdentity | undefined> {
    return this.#naming ?? Promise.resolve(this.#identity);
  }

  /** Starts set-up in the background, at most once per `initRetryDelayMs` unless `force`. */
  kick(force = false): void {
    if (
      this.#ready || this.#initRun || this.#rt.stopped() || this.#peerError
    ) return;
    const retryMs = this.#options.initRetryDelayMs ?? 5_000;
    if (!force && this.#rt.now() - this.#lastInitAttempt < retryMs) return;
    this.#rt.tasks.track(this.ensure(this.#rt.signal).catch(() => {}));
  }

  /** @throws The set-up failure (also reported as a notice). */
  async ensure(signal: AbortSignal): Promise<void> {
    if (this.#ready) {
      await this.#runSetups(signal);
      return;
    }
    if (!this.#initRun) {
      this.#lastInitAttempt = this.#rt.now();
      const created = Promise.withResolvers<void>();
      this.#creating = created.promise;
      const run = this.#setUp(signal, created.resolve);
      this.#initRun = run;
      run.then(() => {}, () => {}).finally(() => {
        created.resolve();
        if (this.#initRun === run) this.#initRun = undefined;
      });
    }
    await this.#initRun;
    await this.#runSetups(signal);
  }

  /** A new epoch, then renaming; a changed Honcho session is no longer ready (`onMoved`). */
  async switchTo(sessionId: string): Promise<boolean> {
    this.#epoch = {};
    if (!sessionId) return false;
    this.#hermesSessionId = sessionId;
    const before = this.#identity?.sessionId;
    const after = await this.name();
    if (!after || after.sessionId === before) return false;
    this.#ready = this.#exists = false;
    this.#observation = undefined;
    this.#options.onMoved?.();
    return true;
  }

  /** Starts a new epoch without moving (shutdown). */
  stop(): void {
    this.#epoch = {};
  }

  /** Plans joining an author peer (or creating an a2a session); it runs before the next delivery. */
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
    this.#setups.set(key, async () => {
      const signal = this.#rt.signal;
      if (create) {
        await client.getOrCreateSession(session, {
          peers: { [peer]: flags.user, [aiPeer]: flags.ai },
          signal,
        });
      } else {
        await client.addSessionPeers(session, { [peer]: flags.user }, {
          signal,
        });
      }
      this.#joined.add(key);
    });
  }

  /**
   * Sets up a queued session before its first delivery in this process, as
   * a live one is set up: its peers (and the AI peer) with the configured
   * observation settings, repairing peers Honcho created without them.
   */
  async prepare(
    client: HonchoClient,
    sessionId: string,
    peerIds: readonly string[],
    signal?: AbortSignal,
  ): Promise<void> {
    if (this.#prepared.has(sessionId)) return;
    await prepareQueuedSession(
      client,
      this.#rt.config,
      sessionId,
      peerIds,
      signal,
    );
    this.#prepared.add(sessionId);
  }

  /** Whether the AI peer observes the others: reads and conclusions then take its view. */
  aiObservesOthers(): boolean {
    return (this.#observation?.ai ?? this.#rt.config.observationFlags.ai)
      ?.observeOthers ?? true;
  }

  async #resolve(): Promise<HonchoSessionIdentity | undefined> {
    const config = this.#rt.config;
    const options = this.#options.initOptions;
    const runtimeIds = normalizeRuntimeIds([options.userId, options.userIdAlt]);
    try {
      const userPeerId = resolveUserPeerId(config, { runtimeIds });
      const sessionKey = await resolveSessionKey(config, {
        cwd: typeof options.cwd === "string" ? options.cwd : undefined,
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
        logFailure("session naming", error, this.#rt.scrub, "warn");
      }
      this.#identity = undefined;
      return undefined;
    }
  }

  async #setUp(signal: AbortSignal, created: () => void): Promise<void> {
    const identity = await (this.#naming ?? this.name());
    if (!identity) {
      throw this.#peerError ??
        new HonchoError("config", "Honcho session could not be named");
    }
    const client = this.#rt.client;
    const epoch = this.#epoch;
    const flags = this.#rt.config.observationFlags;
    try {
      const shared = identity.aiPeerId === identity.userPeerId;
      const peers: Record<string, PeerObservation> = {
        [identity.userPeerId]: flags.user,
      };
      if (!shared) peers[identity.aiPeerId] = flags.ai;
      const setUp = setUpSessionPeers(
        client,
        identity.sessionId,
        peers,
        signal,
        () => {
          this.#exists = this.#identity?.sessionId === identity.sessionId;
          created();
        },
      );
      if (epoch === this.#epoch) this.#options.onNamed?.();
      const server = await setUp;
      if (this.#identity?.sessionId !== identity.sessionId) return;
      this.#prepared.add(identity.sessionId);
      this.#observation = {
        user: server[identity.userPeerId]!,
        ai: shared ? flags.ai : server[identity.aiPeerId]!,
      };
      this.#ready = true;
      this.#rt.notices.clear();
    } catch (error) {
      this.#exists = false;
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
      logFailure("session init", error, this.#rt.scrub);
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

/**
 * Sets up a queued session as a live one is set up: its peers (and the AI
 * peer) with the configured observation settings (user peers the user's,
 * the AI peer the AI's), repairing any Honcho created without them.
 */
export async function prepareQueuedSession(
  client: HonchoClient,
  config: HonchoConfig,
  sessionId: string,
  peerIds: readonly string[],
  signal?: AbortSignal,
): Promise<void> {
  const flags = config.observationFlags;
  const aiPeer = resolveAiPeerId(config);
  const peers: Record<string, PeerObservation> = {};
  for (const id of [...peerIds, aiPeer]) {
    peers[id] = id === aiPeer ? flags.ai : flags.user;
  }
  await setUpSessionPeers(client, sessionId, peers, signal);
}

/**
 * Gets or creates a session with its peers' observation settings; a peer
 * whose settings on the server are unset (Honcho created it implicitly when
 * a message was posted before set-up, and get-or-create keeps that) gets
 * the ones it lacks. Returns each peer's settings in effect (server values
 * win, plugins/memory/honcho/SPEC.md §5).
 */
async function setUpSessionPeers(
  client: HonchoClient,
  sessionId: string,
  peers: Record<string, PeerObservation>,
  signal: AbortSignal | undefined,
  created?: () => void,
): Promise<Record<string, PeerObservation>> {
  await client.getOrCreateSession(sessionId, { peers, signal });
  created?.();
  const out: Record<string, PeerObservation> = {};
  await Promise.all(
    Object.entries(peers).map(async ([peer, local]) => {
      const server: SessionPeerConfig | undefined = await client
        .getSessionPeerConfig(sessionId, peer, { signal }).catch(() =>
          undefined
        );
      out[peer] = mergeServerObservation(local, server);
      if (
        server && (server.observeMe == null || server.observeOthers == null)
      ) {
        await client.setSessionPeerConfig(sessionId, peer, out[peer], {
          signal,
        });
      }
    }),
  );
  return out;
}

/** A computed identity signature and the config-file stamp it was computed for. */
export interface IdentitySignature {
  /** The config file's path, modification time and size (or `:missing`). */
  stamp: string;
  value: Record<string, unknown>;
}

/**
 * The identity-affecting settings (a change rebuilds the gateway's cached
 * agent); `previous` is reused while the config file's mtime and size stay.
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
