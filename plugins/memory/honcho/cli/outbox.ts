/** `hermes honcho outbox [--json]`, `outbox retry [ids…]` and `outbox flush`. @module */

import { join } from "../../../../src/provider/_bundled.ts";
import {
  type CliIo,
  type HermesCommand,
  writeJson,
} from "../../../../src/cli/mod.ts";
import { HonchoOutbox, type OutboxStats } from "../outbox/outbox.ts";
import type { RejectedRecord } from "../outbox/_log.ts";
import {
  connectHoncho,
  describeHonchoFailure,
  HonchoCliError,
  type HonchoCliScope,
  loadScopeConfig,
  serverLabel,
} from "./_common.ts";
import { scopedAction } from "./_action.ts";
import { isRecord } from "../_util.ts";

/** `oldest`: when the oldest was said (ISO). */
interface SessionReport {
  session: string;
  pending: number;
  oldest: string;
}

/** What `--json` prints per outbox file; `configured`: the profile's workspace. */
interface OutboxReport extends OutboxStats {
  workspace: string;
  path: string;
  rejectedPath: string;
  configured: boolean;
  sessions: SessionReport[];
  rejected: RejectedRecord[];
}

/** The configured workspace's outbox (even when empty), then every other one on disk. */
async function profileOutboxes(
  hermesHome: string,
  workspace: string,
  readOnly = false,
): Promise<HonchoOutbox[]> {
  const configured = new HonchoOutbox({ workspace, hermesHome, readOnly });
  const out = [configured];
  const dir = join(hermesHome, "honcho", "outbox");
  const seen = new Set([configured.path, configured.rejectedPath]);
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) =>
      e.name
    ).sort();
  } catch {
    return out;
  }
  for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
    const path = join(dir, name);
    if (seen.has(path)) continue;
    const other = await workspaceOfFile(path);
    if (other === undefined) continue;
    const outbox = new HonchoOutbox({ workspace: other, hermesHome, readOnly });
    if (seen.has(outbox.path)) continue;
    seen.add(outbox.path);
    seen.add(outbox.rejectedPath);
    out.push(outbox);
  }
  return out;
}

/** The workspace recorded in an outbox (or rejected) file's first record. */
async function workspaceOfFile(path: string): Promise<string | undefined> {
  const text = await Deno.readTextFile(path).catch(() => "");
  for (const line of text.split("\n")) {
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value) && typeof value.workspace === "string") {
        return value.workspace;
      }
    } catch {
      // Not a record line.
    }
  }
  return undefined;
}

/** What each outbox of the profile holds, the configured workspace's first. */
export async function outboxReports(
  hermesHome: string,
  workspace: string,
): Promise<OutboxReport[]> {
  const reports = [];
  for (const outbox of await profileOutboxes(hermesHome, workspace, true)) {
    reports.push(await outboxReport(outbox, reports.length === 0));
  }
  return reports;
}

async function outboxReport(
  outbox: HonchoOutbox,
  configured: boolean,
): Promise<OutboxReport> {
  const { workspace, path, rejectedPath } = outbox;
  const base = { workspace, path, rejectedPath, configured };
  // Nothing ever queued: taking the lock would create the folder, and a
  // read-only command writes nothing.
  if (!(await exists(path)) && !(await exists(rejectedPath))) {
    const none = { pending: 0, bytes: 0, attempted: 0, waiting: 0 };
    return { ...base, ...none, verifying: 0, sessions: [], rejected: [] };
  }
  const stats = await outbox.stats();
  const sessions = new Map<string, SessionReport>();
  for (const record of await outbox.pending()) {
    const entry = sessions.get(record.session) ??
      { session: record.session, pending: 0, oldest: record.createdAt };
    entry.pending++;
    if (record.createdAt < entry.oldest) entry.oldest = record.createdAt;
    sessions.set(record.session, entry);
  }
  const rejected = await outbox.rejected();
  return { ...base, ...stats, sessions: [...sessions.values()], rejected };
}

const exists = (path: string): Promise<boolean> =>
  Deno.lstat(path).then(() => true, () => false);

function preview(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Honcho's reason without the request line the error message starts with. */
function reasonText(reason: string): string {
  return preview(reason.replace(/^Honcho \S+ \S+ failed with \d+: /, ""), 100);
}

function printReport(io: CliIo, item: OutboxReport): void {
  io.stdout(
    `Outbox of workspace ${item.workspace}${
      item.configured ? "" : " (not the configured workspace)"
    }: ${item.path}\n`,
  );
  if (item.pending === 0) io.stdout("  Queued: nothing\n");
  else {
    io.stdout(`  Queued: ${item.pending} message(s), ${item.bytes} bytes\n`);
    for (const session of item.sessions) {
      io.stdout(
        `    ${session.session}: ${session.pending} (oldest ${session.oldest})\n`,
      );
    }
    if (item.waiting > 0 && item.settlesAt !== undefined) {
      io.stdout(
        `  In doubt: ${item.waiting} message(s) whose earlier delivery may still land; looked up on Honcho after ${
          new Date(item.settlesAt).toISOString()
        }\n`,
      );
    }
    if (item.verifying > 0) {
      io.stdout(
        `  To look up first: ${item.verifying} message(s) with stable ids (imports) are checked against Honcho before they are sent\n`,
      );
    }
  }
  if (item.rejected.length === 0) {
    io.stdout("  Refused by Honcho: none\n");
    return;
  }
  io.stdout(
    `  Refused by Honcho: ${item.rejected.length} message(s), kept in ${item.rejectedPath}\n`,
  );
  for (const r of item.rejected) {
    io.stdout(
      `    ${r.id}  ${r.session}  ${r.status ?? "-"}  ${
        reasonText(r.reason)
      }\n      "${preview(r.content)}"\n`,
    );
  }
  io.stdout(
    "  Fix the cause, then queue them again with 'hermes honcho outbox retry' (or name ids).\n",
  );
}

async function runOutbox(
  scope: HonchoCliScope,
  options: { json?: boolean },
): Promise<number> {
  const config = await loadScopeConfig(scope);
  const reports = await outboxReports(scope.hermesHome, config.workspaceId);
  if (options.json) writeJson(scope.io, { outboxes: reports });
  else for (const item of reports) printReport(scope.io, item);
  return 0;
}

/** Queues refused messages again (all when `ids` is empty); `1` when a named id is not refused. */
async function runOutboxRetry(
  scope: HonchoCliScope,
  ids: readonly string[] = [],
): Promise<number> {
  const config = await loadScopeConfig(scope);
  let queued = 0;
  const found = new Set<string>();
  for (
    const outbox of await profileOutboxes(scope.hermesHome, config.workspaceId)
  ) {
    const refused = await outbox.rejected();
    const picked = ids.length === 0
      ? undefined
      : refused.filter((r) => ids.includes(r.id)).map((r) => r.id);
    for (const id of picked ?? refused.map((r) => r.id)) found.add(id);
    if (picked !== undefined && picked.length === 0) continue;
    queued += await outbox.retryRejected(picked);
  }
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new HonchoCliError(
      `No refused message has id ${
        missing.join(", ")
      }; 'hermes honcho outbox' lists them${
        queued > 0 ? ` (queued ${queued} other message(s) again)` : ""
      }`,
    );
  }
  scope.io.stdout(
    queued === 0
      ? "Nothing to retry: Honcho refused no message.\n"
      : `Queued ${queued} refused message(s) again; they are delivered with the next turn, the next start, or 'hermes honcho outbox flush'.\n`,
  );
  return 0;
}

/** Delivers the configured workspace's queue now; `1` when some is still queued. */
async function runOutboxFlush(
  scope: HonchoCliScope,
  opts: { timeout: string },
): Promise<number> {
  const { io } = scope;
  const timeoutSeconds = Number(opts.timeout);
  if (!(timeoutSeconds > 0)) {
    throw new HonchoCliError(
      `Cannot use --timeout '${opts.timeout}': give a number of seconds`,
      2,
    );
  }
  const config = await loadScopeConfig(scope);
  const outbox = new HonchoOutbox({
    workspace: config.workspaceId,
    hermesHome: scope.hermesHome,
    // Sessions queued during an outage are set up as a live one is.
    prepareSession: async (client, id, peers, signal) =>
      (await import("../session/session.ts")).prepareQueuedSession(
        client,
        config,
        id,
        peers,
        signal,
      ),
  });
  const before = await outbox.stats();
  if (before.pending === 0) {
    io.stdout(`Nothing queued in ${outbox.path}.\n`);
    return 0;
  }
  const client = await connectHoncho(config).catch((error) => {
    throw new HonchoCliError(describeHonchoFailure(error, serverLabel(config)));
  });
  const result = await outbox.deliver(client, {
    maxRetries: 3,
    deadline: Date.now() + timeoutSeconds * 1000,
  });
  const parts = [`delivered ${result.delivered}`];
  if (result.duplicates > 0) {
    parts.push(`${result.duplicates} already on Honcho`);
  }
  if (result.rejected > 0) parts.push(`${result.rejected} refused`);
  io.stdout(
    `Outbox ${outbox.path}: ${
      parts.join(", ")
    }; ${result.pending} still queued.\n`,
  );
  if (result.busy) {
    io.stdout(
      "Another Hermes process is delivering this outbox right now; it takes the queue.\n",
    );
  }
  if (result.settlesAt !== undefined) {
    io.stdout(
      `${result.waiting} message(s) wait until ${
        new Date(result.settlesAt).toISOString()
      }: an earlier delivery may still land, so they are looked up first.\n`,
    );
  }
  if (result.error !== undefined) {
    io.stderr(
      `error: ${describeHonchoFailure(result.error, serverLabel(config))}\n`,
    );
  }
  return result.pending === 0 ? 0 : 1;
}

export function registerOutbox(honcho: HermesCommand): HermesCommand {
  const command = honcho.command("outbox")
    .summary("Show what is queued for Honcho, what it refused and why")
    .description(
      "Show the durable outbox: messages queued for Honcho per session, those an\n" +
        "earlier uncertain delivery may still land for, and the messages Honcho\n" +
        "refused with its reason. 'retry' queues refused messages again; 'flush'\n" +
        "delivers the queue now.",
    )
    .option("--json", "Print JSON", false)
    .example("hermes honcho outbox")
    .example("hermes honcho outbox --json")
    .example("hermes honcho outbox retry")
    .example("hermes honcho outbox flush");
  scopedAction(honcho, command, runOutbox);
  const retry = command.command("retry")
    .argument("[ids...]", "Ids of refused messages (all when none)")
    .summary("Queue refused messages again")
    .description(
      "Queue messages Honcho refused again, after the cause was fixed. They are\n" +
        "looked up on Honcho before they are sent, so a retry never stores one twice.",
    )
    .example("hermes honcho outbox retry")
    .example("hermes honcho outbox retry 5f0c…");
  scopedAction(honcho, retry, runOutboxRetry);
  const flush = command.command("flush")
    .summary("Deliver the queue now")
    .option("--timeout <seconds>", "How long to try", "30")
    .example("hermes honcho outbox flush");
  scopedAction(honcho, flush, runOutboxFlush);
  return command;
}
