// `hermes memory status`, `hermes memory doctor` and the change summary of
// `hermes memory setup`, run as users run them (the `hermes` task line,
// through the launcher) against the Honcho test server: the provider's
// settings from honcho.json with their sources, the connection, broken
// settings files with file, line and column, the three planted problems of
// the README's doctor session, and both --json reports checked against
// their JSON schemas (the stable keys the README documents).
import assert from "node:assert/strict";
import { join } from "node:path";
import { Ajv2020 } from "npm:ajv@8.20.0/dist/2020.js";
import { startHonchoTestServer } from "../honcho_server.ts";
import { runHermesCli } from "../helpers/hermes_cli_child.ts";

const nullable = (schema: Record<string, unknown>) => ({
  anyOf: [{ type: "null" }, schema],
});

const FILE_SCHEMA = {
  type: "object",
  required: [
    "file",
    "path",
    "role",
    "format",
    "exists",
    "mode",
    "secret",
    "error",
  ],
  properties: {
    file: { type: "string" },
    path: { type: "string" },
    role: { type: "string" },
    format: { enum: ["yaml", "env", "json"] },
    exists: { type: "boolean" },
    mode: nullable({ type: "string", pattern: "^0[0-7]{3}$" }),
    secret: { type: "boolean" },
    error: nullable({
      type: "object",
      required: ["message", "line", "column", "fix"],
      properties: {
        message: { type: "string" },
        line: nullable({ type: "integer", minimum: 1 }),
        column: nullable({ type: "integer", minimum: 1 }),
        fix: { type: "string", minLength: 1 },
      },
    }),
  },
};

const CONNECTION_SCHEMA = {
  type: "object",
  required: ["attempted", "ok", "url", "elapsedMs", "error", "fix"],
  properties: {
    attempted: { type: "boolean" },
    ok: { type: "boolean" },
    url: nullable({ type: "string" }),
    elapsedMs: nullable({ type: "integer", minimum: 0 }),
    error: nullable({ type: "string" }),
    fix: nullable({ type: "string" }),
  },
};

/** The stable keys of `hermes memory status --json`. */
export const STATUS_SCHEMA = {
  type: "object",
  required: [
    "hermesHome",
    "configPath",
    "builtin",
    "files",
    "providerSetting",
    "provider",
    "plugins",
  ],
  properties: {
    hermesHome: { type: "string" },
    configPath: { type: "string" },
    builtin: {
      type: "object",
      required: [
        "memoryEnabled",
        "userProfileEnabled",
        "memoryToolEnabled",
        "directory",
        "files",
      ],
    },
    files: { type: "array", items: FILE_SCHEMA },
    providerSetting: { type: "string" },
    provider: nullable({
      type: "object",
      required: [
        "name",
        "installed",
        "config",
        "fields",
        "settings",
        "connection",
      ],
      properties: {
        name: { type: "string" },
        installed: { type: "boolean" },
        available: { type: "boolean" },
        config: { type: "object" },
        fields: { type: "array" },
        settings: nullable({
          type: "object",
          additionalProperties: {
            type: "object",
            required: ["value", "source", "set"],
            properties: {
              source: { type: "string" },
              set: { type: "boolean" },
            },
          },
        }),
        connection: nullable(CONNECTION_SCHEMA),
      },
    }),
    plugins: {
      type: "array",
      items: {
        type: "object",
        required: ["name", "description", "source", "available", "active"],
      },
    },
  },
};

/** The stable keys of `hermes memory doctor --json`. */
export const DOCTOR_SCHEMA = {
  type: "object",
  required: [
    "hermesHome",
    "provider",
    "ok",
    "problems",
    "files",
    "orphanedTempFiles",
    "grant",
    "connection",
    "outbox",
    "checkpoint",
  ],
  additionalProperties: false,
  properties: {
    hermesHome: { type: "string" },
    provider: nullable({ type: "string" }),
    ok: { type: "boolean" },
    problems: {
      type: "array",
      items: {
        type: "object",
        required: ["check", "where", "message", "fix"],
        additionalProperties: false,
        properties: {
          check: { type: "string", pattern: "^[a-z]+\\.[a-z_]+$" },
          where: { type: "string" },
          message: { type: "string", minLength: 1 },
          fix: { type: "string", minLength: 1 },
        },
      },
    },
    files: { type: "array", items: FILE_SCHEMA },
    orphanedTempFiles: { type: "array", items: { type: "string" } },
    grant: nullable({
      type: "object",
      required: ["needs", "granted", "missing"],
      properties: {
        needs: { type: "array", items: { type: "string" } },
        granted: { type: "array", items: { type: "string" } },
        missing: { type: "array", items: { type: "string" } },
      },
    }),
    connection: nullable(CONNECTION_SCHEMA),
    outbox: nullable({
      type: "object",
      required: ["queued", "rejected", "oldest"],
      properties: {
        queued: { type: "integer", minimum: 0 },
        rejected: { type: "integer", minimum: 0 },
        oldest: nullable({ type: "string" }),
      },
    }),
    checkpoint: {
      type: "object",
      required: ["required", "providerApiVersion", "ok"],
      properties: {
        required: { type: "boolean" },
        providerApiVersion: nullable({ type: "integer" }),
        ok: { type: "boolean" },
      },
    },
  },
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validStatus = ajv.compile(STATUS_SCHEMA);
const validDoctor = ajv.compile(DOCTOR_SCHEMA);

function assertSchema(
  validate: typeof validStatus,
  value: unknown,
  what: string,
): void {
  assert.ok(
    validate(value),
    `${what}: ${JSON.stringify(validate.errors, null, 2)}`,
  );
}

interface User extends AsyncDisposable {
  home: string;
  root: string;
}

async function user(config = "memory:\n  provider: honcho\n"): Promise<User> {
  const home = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-doctor-" }),
  );
  const root = join(home, ".hermes");
  await Deno.mkdir(root, { recursive: true });
  if (config !== "") {
    await Deno.writeTextFile(join(root, "config.yaml"), config);
  }
  return {
    home,
    root,
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

async function hermes(u: User, args: string[]) {
  const r = await runHermesCli(args, { userHome: u.home });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

function deadUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return `http://127.0.0.1:${port}`;
}

/** The README's doctor session: three planted problems. */
export async function plantThreeProblems(root: string, url: string) {
  await Deno.writeTextFile(
    join(root, ".env"),
    `HONCHO_API_KEY=hch-demo-key-7731\nHONCHO_BASE_URL=${url}\n`,
  );
  await Deno.chmod(join(root, ".env"), 0o644);
  await Deno.writeTextFile(
    join(root, "honcho.json"),
    '{\n  "peerName": "alice",\n  "workspace": "notes",\n}\n',
    { mode: 0o600 },
  );
}

Deno.test("memory setup --yes prints the keys it changed; status shows honcho.json's settings and the connection; doctor is clean", async () => {
  await using server = await startHonchoTestServer();
  await using u = await user();
  const setup = await hermes(u, [
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--set",
    `baseUrl=${server.url}`,
    "--set",
    "peerName=alice",
    "--set",
    "apiKey=hch-secret-key-9876",
  ]);
  assert.equal(setup.code, 0, setup.err);
  assert.match(setup.out, /^Changes:$/m);
  assert.match(
    setup.out,
    /^ {2}config\.yaml: memory\.provider honcho → honcho \(unchanged\)$/m,
  );
  const host = new URL(server.url).host;
  assert.match(
    setup.out,
    new RegExp(
      `^ {2}config\\.yaml: memory\\.permissions\\.honcho\\.net set to \\["${host}"\\]$`,
      "m",
    ),
  );
  assert.match(
    setup.out,
    new RegExp(`^ {2}honcho\\.json: baseUrl set to ${server.url}$`, "m"),
  );
  assert.match(
    setup.out,
    /^ {2}honcho\.json: hosts\.hermes\.peerName set to alice$/m,
  );
  // A self-hosted server is sent only a key from honcho.json.
  assert.match(
    setup.out,
    /^ {2}honcho\.json: hosts\.hermes\.apiKey set to \.\.\.9876$/m,
  );
  assert.ok(!setup.out.includes("hch-secret-key-9876"), setup.out);

  const status = await hermes(u, ["memory", "status", "--json"]);
  assert.equal(status.code, 0, status.err);
  const report = JSON.parse(status.out);
  assertSchema(validStatus, report, "status --json");
  const settings = report.provider.settings;
  assert.deepEqual(settings.baseUrl, {
    value: server.url,
    source: `${join(u.root, "honcho.json")} (root)`,
    set: true,
  });
  assert.equal(
    settings.peerName.source,
    `${join(u.root, "honcho.json")} hosts.hermes`,
  );
  assert.equal(settings.apiKey.value, "...9876");
  assert.equal(settings.apiKey.set, true);
  assert.equal(
    report.provider.fields.find((f: { key: string }) => f.key === "peerName")
      .set,
    true,
  );
  assert.equal(
    report.provider.connection.ok,
    true,
    JSON.stringify(report.provider.connection),
  );
  assert.equal(report.provider.connection.url, server.url);
  assert.ok(!status.out.includes("hch-secret-key-9876"));

  const text = await hermes(u, ["memory", "status", "--no-probe"]);
  assert.equal(text.code, 0, text.err);
  assert.match(
    text.out,
    /^ {4}peerName +alice +\S+honcho\.json hosts\.hermes$/m,
  );
  // Text status does not probe unless asked, and says so.
  assert.match(
    text.out,
    /^ {2}Connection: not checked \('hermes memory status --probe'/m,
  );
  const probed = await hermes(u, ["memory", "status", "--probe"]);
  assert.match(probed.out, /^ {2}Connection: ok /m);

  const doctor = await hermes(u, ["memory", "doctor"]);
  assert.equal(doctor.code, 0, doctor.out + doctor.err);
  assert.match(doctor.out, /^✓ No problems found \(checked /m);
  const json = await hermes(u, ["memory", "doctor", "--json"]);
  assert.equal(json.code, 0);
  const doctorReport = JSON.parse(json.out);
  assertSchema(validDoctor, doctorReport, "doctor --json");
  assert.equal(doctorReport.ok, true);
  assert.deepEqual(doctorReport.grant.missing, []);
  assert.equal(doctorReport.outbox.queued, 0);
  assert.equal(doctorReport.checkpoint.providerApiVersion, 2);
});

Deno.test("memory setup --yes --json prints only the change summary on stdout", async () => {
  await using u = await user("");
  const url = deadUrl();
  const result = await hermes(u, [
    "memory",
    "setup",
    "honcho",
    "--yes",
    "--json",
    "--set",
    `baseUrl=${url}`,
  ]);
  // Saved, but the connection test failed: exit 1.
  assert.equal(result.code, 1, result.err);
  const report = JSON.parse(result.out);
  assert.equal(report.provider, "honcho");
  assert.equal(report.exitCode, 1);
  const keys = report.changes.map((
    c: { file: string; key: string; change: string },
  ) => `${c.file} ${c.key} ${c.change}`);
  assert.deepEqual(keys, [
    "config.yaml memory.provider set",
    "config.yaml memory.permissions.honcho.net set",
    "honcho.json baseUrl set",
    "honcho.json hosts.hermes set",
  ]);
  // The provider's messages and the failed connection test went to stderr,
  // with the cause and the fix.
  assert.match(
    result.err,
    new RegExp(
      `warning: connection test failed: ${url} is unreachable \\(connection refused\\); the settings are saved\\. Fix: start the Honcho server at ${url}`,
    ),
  );
  const bad = await hermes(u, ["memory", "setup", "--json"]);
  assert.equal(bad.code, 2);
  // Under --json the usage error is JSON on stdout.
  assert.match(JSON.parse(bad.out).error.message, /^--json needs --yes/);
});

Deno.test("memory doctor names the three planted problems (mode, trailing comma, net grant), one line each, exit 1", async () => {
  await using u = await user();
  const url = deadUrl();
  await plantThreeProblems(u.root, url);
  const host = new URL(url).host;
  const result = await hermes(u, ["memory", "doctor"]);
  assert.equal(result.code, 1, result.out + result.err);
  const lines = result.out.split("\n").filter((l) => l.startsWith("✗ "));
  assert.deepEqual(lines, [
    `✗ ${u.root}/.env: holds secrets but is mode 0644, so other users can read it — fix: chmod 600 ${u.root}/.env`,
    `✗ ${u.root}/honcho.json:4:1: does not parse: invalid JSON — fix: fix the JSON there (often a trailing comma or a missing quote), or remove the file and run 'hermes memory setup honcho'`,
    `✗ ${u.root}/config.yaml memory.permissions.honcho.net: lacks ${host}, the server honcho is configured for, so the provider cannot reach it — fix: add '- ${host}' under memory.permissions.honcho.net in config.yaml (or re-run 'hermes memory setup honcho', which adds it)`,
  ]);
  assert.match(result.out, /^3 problems found \(checked /m);
  assert.ok(!result.out.includes("hch-demo-key-7731"));

  const json = await hermes(u, ["memory", "doctor", "--json"]);
  assert.equal(json.code, 1);
  const report = JSON.parse(json.out);
  assertSchema(validDoctor, report, "doctor --json");
  assert.deepEqual(
    report.problems.map((p: { check: string }) => p.check),
    ["file.mode", "file.parse", "grant.net"],
  );
  assert.deepEqual(report.grant.missing, [host]);

  // status shows the broken file too, and honcho status does not call it
  // disabled.
  const status = await hermes(u, ["memory", "status", "--json", "--no-probe"]);
  assert.equal(status.code, 1);
  const statusReport = JSON.parse(status.out);
  assertSchema(validStatus, statusReport, "status --json");
  const broken = statusReport.files.find((f: { file: string }) =>
    f.file === "honcho.json"
  );
  assert.deepEqual(
    [broken.error.line, broken.error.column, broken.error.message],
    [4, 1, "invalid JSON"],
  );
  assert.match(
    status.err,
    new RegExp(
      `^error: ${u.root}/honcho\\.json:4:1: invalid JSON; fix the JSON`,
      "m",
    ),
  );
  const honcho = await hermes(u, ["honcho", "status", "--offline"]);
  assert.ok(!honcho.out.includes("disabled"), honcho.out);
  await Deno.remove(join(u.root, ".env"));
  const keyless = await hermes(u, ["honcho", "status", "--offline"]);
  assert.equal(keyless.code, 1);
  assert.match(
    keyless.out,
    /^ {2}Usable +no: \S+honcho\.json does not parse \(see Connection below\)$/m,
  );
  assert.ok(!keyless.out.includes("disabled"), keyless.out);
});

Deno.test("memory doctor: a leftover temporary file and an armed checkpoint gate without a provider", async () => {
  await using u = await user(
    "memory:\n  provider: ''\ncompression:\n  checkpoint_required: true\n",
  );
  const leftover = join(u.root, ".config.yaml.tmp.4242.0badc0de");
  await Deno.writeTextFile(leftover, "half");
  const result = await hermes(u, ["memory", "doctor", "--json"]);
  assert.equal(result.code, 1, result.err);
  const report = JSON.parse(result.out);
  assertSchema(validDoctor, report, "doctor --json");
  assert.deepEqual(report.orphanedTempFiles, [leftover]);
  assert.deepEqual(
    report.problems.map((p: { check: string; where: string }) =>
      `${p.check} ${p.where}`
    ),
    [
      `file.orphaned_temp ${leftover}`,
      `checkpoint.gate ${u.root}/config.yaml compression.checkpoint_required`,
    ],
  );
  assert.equal(report.checkpoint.ok, false);
  await Deno.remove(leftover);
  await Deno.writeTextFile(
    join(u.root, "config.yaml"),
    "memory:\n  provider: ''\n",
  );
  const clean = await hermes(u, ["memory", "doctor"]);
  assert.equal(clean.code, 0, clean.out);
  assert.match(clean.out, /provider: built-in only/);
});

Deno.test("memory doctor: a key the server refuses is one connection line with the fix", async () => {
  await using server = await startHonchoTestServer({
    apiKey: "hch-right-1111",
  });
  const host = new URL(server.url).host;
  await using u = await user(
    `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net:\n        - ${host}\n`,
  );
  await Deno.writeTextFile(
    join(u.root, "honcho.json"),
    `${
      JSON.stringify({
        baseUrl: server.url,
        hosts: { hermes: { apiKey: "hch-wrong-2222", peerName: "alice" } },
      })
    }\n`,
    { mode: 0o600 },
  );
  const result = await hermes(u, ["memory", "doctor", "--json"]);
  assert.equal(result.code, 1, result.err);
  const report = JSON.parse(result.out);
  assertSchema(validDoctor, report, "doctor --json");
  assert.deepEqual(
    report.problems.map((p: { check: string }) => p.check),
    ["provider.connection"],
  );
  assert.match(
    report.problems[0].message,
    /refused the credentials \(HTTP 401/,
  );
  assert.match(report.problems[0].fix, /^set the right API key/);
  assert.ok(!result.out.includes("hch-wrong-2222"));
  assert.equal(
    report.files.find((f: { file: string }) => f.file === "honcho.json").secret,
    true,
  );
});
