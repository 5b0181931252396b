/**
 * `hermes honcho peers` (one row per profile) and `peers map`: gateway
 * account ids mapped to Honcho peers in `userPeerAliases`.
 * @module
 */

import { join } from "../../../../src/provider/_bundled.ts";
import type { CliIo, HermesCommand } from "../../../../src/cli/mod.ts";
import type { HonchoConfig } from "../config/config.ts";
import type { HonchoClient } from "../client/client.ts";
import { resolveAiPeerId } from "../session/peers.ts";
import {
  checkHonchoId,
  connectHoncho,
  describeConfigError,
  describeHonchoFailure,
  HonchoCliError,
  type HonchoCliScope,
  listProfiles,
  loadScopeConfig,
  reportWrite,
  requireReadableConfig,
  serverLabel,
  writeHonchoFile,
  writeHostKey,
} from "./_common.ts";
import { profileRows, scopedAction } from "./_action.ts";
import { isRecord, sanitizeId } from "../_util.ts";

const MAX_LISTED_PEERS = 200;

async function runPeers(
  scope: HonchoCliScope,
  options: { json?: boolean },
): Promise<number> {
  const rows = await profileRows(
    scope,
    options.json,
    ["User peer", "AI peer", "Workspace", "Aliases"],
    (config) => ({
      userPeer: config.peerName ? sanitizeId(config.peerName) : null,
      aiPeer: resolveAiPeerId(config),
      workspace: config.workspaceId,
      aliases: config.userPeerAliases,
      note: config.configError ? describeConfigError(config) : null,
    }),
    (r) => [
      r.userPeer ?? "(none)",
      r.aiPeer,
      r.workspace,
      String(Object.keys(r.aliases).length),
    ],
  );
  if (!rows) return 0;
  for (const r of rows) {
    if (r.note) scope.io.stderr(`warning: profile '${r.profile}': ${r.note}\n`);
  }
  scope.io.stdout(
    "(* = the profile this command runs for; map gateway accounts with 'hermes honcho peers map')\n",
  );
  return 0;
}

interface PeersMapOptions {
  set?: string[];
  remove?: string[];
  /** `root` (all profiles) or `host` (this profile). */
  scope?: string;
  yes?: boolean;
}

/** `id` is the runtime user id (a `userPeerAliases` key). */
interface GatewayAccount {
  id: string;
  platform: string | undefined;
}

/** The accounts in `state.db` (`sessions.user_id`), bots skipped; `[]` when unreadable. */
async function readGatewayAccounts(
  hermesHome: string,
): Promise<GatewayAccount[]> {
  const path = join(hermesHome, "state.db");
  if (!await Deno.stat(path).then((i) => i.isFile, () => false)) return [];
  try {
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const columns = new Set(
        (db.prepare("PRAGMA table_info(sessions)").all() as { name: string }[])
          .map((row) => row.name),
      );
      if (!columns.has("user_id")) return [];
      const platform = columns.has("source") ? "source" : "NULL";
      const rows = db.prepare(
        `SELECT DISTINCT user_id AS id, ${platform} AS platform FROM sessions WHERE user_id IS NOT NULL AND user_id != ''`,
      ).all() as { id: unknown; platform: unknown }[];
      const seen = new Map<string, GatewayAccount>();
      for (const row of rows) {
        const id = String(row.id).trim();
        if (!id || /^bot[:_-]/i.test(id)) continue;
        const source = typeof row.platform === "string"
          ? row.platform
          : undefined;
        if (source === "cli" || source === "cron") continue;
        if (!seen.has(id)) seen.set(id, { id, platform: source });
      }
      return [...seen.values()].sort((a, b) => a.id.localeCompare(b.id));
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

async function listWorkspacePeers(
  client: HonchoClient,
): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ids.length < MAX_LISTED_PEERS; page++) {
    const result = await client.listPeers({ page, size: 50 });
    ids.push(...result.items.map((peer) => peer.id));
    if (page >= result.pages || result.items.length === 0) break;
  }
  return ids.slice(0, MAX_LISTED_PEERS);
}

function parseAssignment(text: string): [string, string] {
  const at = text.indexOf("=");
  const id = at < 0 ? "" : text.slice(0, at).trim();
  const peer = at < 0 ? "" : text.slice(at + 1).trim();
  if (!id || !peer) {
    throw new HonchoCliError(
      `Cannot use --set '${text}': write it as ACCOUNT_ID=PEER, e.g. --set telegram:42=alice`,
      2,
    );
  }
  return [id, checkHonchoId("peer name", peer)];
}

/** `0`; `1` when cancelled or a write failed; `2` for bad arguments. */
async function runPeersMap(
  scope: HonchoCliScope,
  options: PeersMapOptions,
): Promise<number> {
  const { io } = scope;
  if (options.scope !== undefined && !/^(root|host)$/.test(options.scope)) {
    throw new HonchoCliError(
      `Cannot save aliases to '${options.scope}': valid places are root, host`,
      2,
    );
  }
  const config = await loadScopeConfig(scope);
  requireReadableConfig(config);
  const hostAliases = isRecord(config.hostBlock.userPeerAliases);
  const aliases: Record<string, string> = { ...config.userPeerAliases };
  if (options.set?.length || options.remove?.length || options.yes) {
    for (const text of options.set ?? []) {
      const [id, peer] = parseAssignment(text);
      aliases[id] = peer;
    }
    for (const id of options.remove ?? []) delete aliases[id.trim()];
    const where = options.scope ?? (hostAliases ? "host" : "root");
    return await saveAliases(scope, config, aliases, where);
  }
  if (!io.stdinIsTerminal) {
    throw new HonchoCliError(
      "standard input is not a terminal, so 'peers map' cannot ask; give --set ACCOUNT_ID=PEER (repeatable) or --remove ACCOUNT_ID",
      2,
    );
  }
  return await interactiveMap(scope, config, aliases, options, hostAliases);
}

async function interactiveMap(
  scope: HonchoCliScope,
  config: HonchoConfig,
  aliases: Record<string, string>,
  options: PeersMapOptions,
  hostAliases: boolean,
): Promise<number> {
  const { io } = scope;
  const accounts = await readGatewayAccounts(scope.hermesHome);
  let workspace = config.workspaceId;
  let client: HonchoClient | undefined;
  let peers: string[] = [];
  let peersError: string | undefined;
  const loadPeers = async (): Promise<void> => {
    try {
      client = (await connectHoncho(config)).withWorkspace(workspace);
      peers = await listWorkspacePeers(client);
      peersError = undefined;
    } catch (error) {
      peers = [];
      peersError = describeHonchoFailure(error, serverLabel(config));
    }
  };
  const listed = (): string =>
    peersError
      ? `peers not listed: ${peersError}`
      : `${peers.length} peer${peers.length === 1 ? "" : "s"}`;
  await loadPeers();
  io.stdout(
    `Map gateway accounts to Honcho peers (workspace ${workspace}${
      peersError ? "; " : ", "
    }${listed()}).\n`,
  );
  if (accounts.length === 0) {
    io.stdout(
      "No gateway accounts found in state.db; add account ids by hand.\n",
    );
  }
  const ADD = "\u0000add";
  const PEEK = "\u0000peek";
  const SWITCH = "\u0000workspace";
  const SAVE = "\u0000save";
  const QUIT = "\u0000quit";
  let workspaceChanged = false;
  for (;;) {
    const ids = [
      ...new Set([...accounts.map((a) => a.id), ...Object.keys(aliases)]),
    ]
      .sort();
    const choice = await io.prompts.select<string>({
      message: "Pick an account to map, or an action",
      choices: [
        ...ids.map((id) => {
          const platform = accounts.find((a) => a.id === id)?.platform;
          return {
            value: id,
            name: `${id}${platform ? ` (${platform})` : ""} → ${
              aliases[id] ?? "(not mapped)"
            }`,
          };
        }),
        { value: ADD, name: "Add an account id…" },
        { value: PEEK, name: "Peek at a peer's card…" },
        { value: SWITCH, name: `Switch workspace (now ${workspace})…` },
        { value: SAVE, name: "Save and exit" },
        { value: QUIT, name: "Exit without saving" },
      ],
    });
    if (choice === QUIT) {
      io.stdout("No changes saved.\n");
      return 0;
    }
    if (choice === SAVE) break;
    if (choice === PEEK) {
      await peekCard(io, client, peers);
      continue;
    }
    if (choice === SWITCH) {
      const next = await pickWorkspace(io, client, workspace);
      if (next !== workspace) {
        workspace = next;
        workspaceChanged = true;
        await loadPeers();
        io.stdout(`Workspace ${workspace}: ${listed()}\n`);
      }
      continue;
    }
    let id = choice;
    if (choice === ADD) {
      id =
        (await io.prompts.input({ message: "Account id (e.g. telegram:42)" }))
          .trim();
      if (!id) continue;
    }
    const peer = await pickPeer(io, peers, aliases[id]);
    if (peer === null) delete aliases[id];
    else if (peer !== undefined) aliases[id] = peer;
  }
  let where = options.scope;
  if (where === undefined) {
    const profiles = await listProfiles(scope.defaultRoot);
    where = hostAliases ? "host" : "root";
    if (profiles.length > 1) {
      where = await io.prompts.select<string>({
        message: "Save the aliases for",
        choices: [
          { value: "root", name: "All profiles (root userPeerAliases)" },
          {
            value: "host",
            name: `This profile only (hosts.${writeHostKey(config)})`,
          },
        ],
        default: where,
      });
    }
  }
  return await saveAliases(
    scope,
    config,
    aliases,
    where,
    workspaceChanged ? workspace : undefined,
  );
}

async function pickPeer(
  io: CliIo,
  peers: string[],
  current: string | undefined,
): Promise<string | null | undefined> {
  const REMOVE = "\u0000remove";
  const BACK = "\u0000back";
  const choice = await pickId(io, "Peer for this account", peers, current, [
    "peer name",
    "Peer name",
    "peer name",
  ], [
    ...(current ? [{ value: REMOVE, name: "Remove this mapping" }] : []),
    { value: BACK, name: "Back" },
  ]);
  return choice === BACK ? undefined : choice === REMOVE ? null : choice;
}

/** One of `names`, an `extra` choice, or a typed id (asked until valid). */
async function pickId(
  io: CliIo,
  message: string,
  names: string[],
  current: string | undefined,
  [what, prompt, choiceName]: [string, string, string],
  extra: { value: string; name: string }[] = [],
): Promise<string> {
  const TYPE = "\u0000type";
  const choice = names.length + extra.length === 0
    ? TYPE
    : await io.prompts.select<string>({
      message,
      choices: [
        ...names.map((n) => ({ value: n, name: n })),
        { value: TYPE, name: `Type a ${choiceName}…` },
        ...extra,
      ],
      default: current && names.includes(current) ? current : undefined,
    });
  while (choice === TYPE) {
    const typed = await io.prompts.input({ message: prompt, default: current });
    try {
      return checkHonchoId(what, typed);
    } catch (error) {
      io.stderr(`${(error as Error).message}\n`);
    }
  }
  return choice;
}

async function peekCard(
  io: CliIo,
  client: HonchoClient | undefined,
  peers: string[],
): Promise<void> {
  if (client === undefined || peers.length === 0) {
    io.stdout("No peers to peek at.\n");
    return;
  }
  const peer = await io.prompts.select<string>({
    message: "Whose card?",
    choices: peers.map((p) => ({ value: p, name: p })),
  });
  try {
    const card = await client.getPeerCard(peer);
    if (!card || card.length === 0) io.stdout(`${peer}: no card facts yet\n`);
    else {
      io.stdout(`${peer}:\n`);
      for (const fact of card.slice(0, 10)) io.stdout(`  - ${fact}\n`);
    }
  } catch (error) {
    io.stdout(
      `${peer}: card not read (${
        describeHonchoFailure(error, client.baseUrl)
      })\n`,
    );
  }
}

async function pickWorkspace(
  io: CliIo,
  client: HonchoClient | undefined,
  current: string,
): Promise<string> {
  // Workspace listing needs an admin key; without one, fall back to typing.
  const names = await client?.listWorkspaces({ size: 50 }).then(
    (page) => page.items.map((w) => w.id),
    () => [],
  ) ?? [];
  return await pickId(io, "Workspace", names, current, [
    "workspace",
    "Workspace id",
    "workspace id",
  ]);
}

async function saveAliases(
  scope: HonchoCliScope,
  config: HonchoConfig,
  wanted: Record<string, string>,
  where: string,
  workspace?: string,
): Promise<number> {
  const { io } = scope;
  const hostKey = writeHostKey(config);
  const hostChanges = workspace === undefined ? {} : { workspace };
  // What this command changed, against the map it started from; applied to
  // the map as it is inside the file's lock, so concurrent `peers map`
  // commands keep each other's accounts.
  const before = config.userPeerAliases;
  const set = Object.entries(wanted).filter(([id, peer]) =>
    before[id] !== peer
  );
  const removed = Object.keys(before).filter((id) =>
    !Object.hasOwn(wanted, id)
  );
  let aliases: Record<string, string> = {};
  const written = await writeHonchoFile(config, scope.hermesHome, (file) => {
    const hosts = isRecord(file.hosts) ? file.hosts : {};
    const block = isRecord(hosts[hostKey]) ? hosts[hostKey] : {};
    const current = where === "host" && isRecord(block.userPeerAliases)
      ? block.userPeerAliases
      : isRecord(file.userPeerAliases)
      ? file.userPeerAliases
      : {};
    aliases = Object.fromEntries(
      Object.entries(current).filter(([, v]) => typeof v === "string"),
    ) as Record<string, string>;
    for (const [id, peer] of set) aliases[id] = peer;
    for (const id of removed) delete aliases[id];
    const value = Object.keys(aliases).length > 0 ? aliases : undefined;
    return where === "host"
      ? { host: { ...hostChanges, userPeerAliases: value ?? {} }, hostKey }
      : {
        root: { userPeerAliases: value },
        ...(Object.keys(hostChanges).length > 0
          ? { host: hostChanges, hostKey }
          : {}),
      };
  });
  await reportWrite(scope, written);
  const count = Object.keys(aliases).length;
  io.stdout(
    `Saved ${count} account mapping${count === 1 ? "" : "s"} to ${
      where === "host"
        ? `hosts.${hostKey}.userPeerAliases`
        : "root userPeerAliases"
    } in ${written.path}\n`,
  );
  for (const [id, peer] of Object.entries(aliases).sort()) {
    io.stdout(`  ${id} → ${peer}\n`);
  }
  if (workspace !== undefined) {
    io.stdout(`Workspace set to ${workspace} (hosts.${hostKey}.workspace)\n`);
  }
  if (where === "root" && isRecord(config.hostBlock.userPeerAliases)) {
    io.stderr(
      `warning: hosts.${hostKey}.userPeerAliases replaces the root map for this profile; use --scope host to change it\n`,
    );
  }
  return 0;
}

export function registerPeers(honcho: HermesCommand): HermesCommand {
  const peers = honcho.command("peers")
    .summary("List each profile's peers; 'peers map' maps gateway accounts")
    .description(
      "List every profile with its host, user peer, AI peer and workspace.\n" +
        "'hermes honcho peers map' maps gateway account ids to Honcho peers\n" +
        "(userPeerAliases).",
    )
    .option("--json", "Print JSON", false)
    .example("hermes honcho peers")
    .example("hermes honcho peers map");
  scopedAction(honcho, peers, runPeers);
  const map = peers.command("map")
    .summary("Map gateway accounts to Honcho peers (userPeerAliases)")
    .description(
      "Map gateway account ids (runtime user ids) to Honcho peers. On a terminal:\n" +
        "pick accounts seen in state.db (or type one), then a peer of the\n" +
        "workspace (up to 200 listed) or a new name; peek at a peer's card; switch\n" +
        "workspace. Saved to root userPeerAliases (all profiles) or this\n" +
        "profile's host block (asked when there are several profiles). Without a\n" +
        "terminal use --set and --remove.",
    )
    .option(
      "--set <id=peer>",
      "Map an account id to a peer (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      "--remove <id>",
      "Remove an account's mapping (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      "--scope <where>",
      "Save to 'root' (all profiles) or 'host' (this profile)",
    )
    .option("-y, --yes", "Ask nothing", false)
    .example("hermes honcho peers map")
    .example("hermes honcho peers map --set telegram:42=alice --scope root");
  scopedAction(honcho, map, runPeersMap);
  return peers;
}
