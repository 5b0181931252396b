// Replays tests/fixtures/hermes_vectors/dotenv.json (57 `.env` files loaded
// by Hermes Agent's hermes_cli/env_loader.load_hermes_dotenv with
// python-dotenv 1.2.2) against readEnvBytes() plus the credential rule of
// getSecret(): the environment Hermes ends up with must be the one the
// project reads, value for value, unless listed in deviations.json.
import assert from "node:assert/strict";
import { credentialValue, readEnvBytes } from "../../src/profile/env_file.ts";
import { setLogger } from "../../src/core/log.ts";
import {
  decodeBytes,
  type Deviation,
  deviationsFor,
  type EncodedBytes,
  loadFixture,
  rulesFor,
  Tally,
} from "./_vectors.ts";

interface Case {
  id: string;
  input: { env_bytes: EncodedBytes; env: Record<string, string> };
  loader: {
    exception?: { type: string; message: string };
    set: Record<string, string>;
    removed: string[];
    environ_after: Record<string, string>;
    file_rewritten?: boolean;
    logs: { level: string; logger: string; message: string }[];
  };
}

const HOME = "<HOME>";
const HERMES_HOME = "<HERMES_HOME>";

/** The environment the project reads for one recorded start-up. */
export function projectEnvironment(
  bytes: Uint8Array | null,
  start: Record<string, string>,
): {
  environ: Record<string, string>;
  invalidLines: number[];
  warned: boolean;
} {
  const invalidLines: number[] = [];
  let warned = false;
  const previous = setLogger({
    log(level, message) {
      if (level !== "warn") return;
      const line = /^Ignoring line (\d+) of/.exec(message);
      if (line) invalidLines.push(Number(line[1]));
      else warned = true;
    },
  });
  try {
    const values = bytes === null ? {} : readEnvBytes(
      `${HERMES_HOME}/.env`,
      bytes,
      { lookup: (name) => start[name] },
    );
    const environ: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...start, ...values })) {
      environ[name] = credentialValue(name, value);
    }
    return { environ, invalidLines, warned };
  } finally {
    setLogger(previous);
  }
}

function sorted(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(o).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
  );
}

function checkDeviation(
  d: Deviation,
  c: Case,
  ours: ReturnType<typeof projectEnvironment>,
): string | null {
  switch (d.id) {
    case "dotenv-utf32":
      return c.loader.exception && ours.warned
        ? null
        : "expected Hermes to fail and us to warn";
    case "dotenv-latin1-rewrite":
      return Object.values(ours.environ).some((v) => v.includes("\ufffd"))
        ? "we read U+FFFD"
        : null;
    case "dotenv-managed-keys":
      return c.loader.removed.length > 0 ? null : "Hermes removed nothing";
    case "dotenv-credential-sweep-without-file":
      return c.input.env_bytes === null ? null : "the case has a .env";
    default:
      return `no check written for deviation ${d.id}`;
  }
}

Deno.test(".env: every recorded file gives the environment Hermes' loader gives", async () => {
  const fixture = await loadFixture<Case>("dotenv.json");
  const deviations = await deviationsFor("dotenv");
  const rules = new Set(await rulesFor("dotenv"));
  const used = new Set<string>();
  const tally = new Tally("dotenv");
  for (const c of fixture.cases) {
    const start = { HOME, HERMES_HOME, ...c.input.env };
    const ours = projectEnvironment(decodeBytes(c.input.env_bytes), start);
    const failures: string[] = [];
    const want = sorted(c.loader.environ_after);
    const got = sorted(ours.environ);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      failures.push(
        `environment: ours ${JSON.stringify(got)}\n  python ${
          JSON.stringify(want)
        }`,
      );
    }
    const pyLines = c.loader.logs.flatMap((l) => {
      const m = /could not parse statement starting at line (\d+)/.exec(
        l.message,
      );
      return m ? [Number(m[1])] : [];
    });
    if (JSON.stringify(pyLines) !== JSON.stringify(ours.invalidLines)) {
      failures.push(
        `unparseable lines: ours ${ours.invalidLines} python ${pyLines}`,
      );
    }
    if (c.loader.exception) {
      failures.push(`Hermes raised ${c.loader.exception.type}`);
    }
    // Rule "dotenv-never-rewritten": Hermes' loader rewrites a .env it
    // normalises; reading here never writes (readEnvBytes only has bytes).
    if (c.loader.file_rewritten) used.add("dotenv-never-rewritten");
    const deviation = deviations.get(c.id);
    const problem = deviation && checkDeviation(deviation, c, ours);
    if (problem) tally.failures.push(`${c.id} [${deviation!.id}]: ${problem}`);
    else tally.add(c.id, failures, deviation, c.loader.file_rewritten === true);
  }
  console.log(tally.report());
  for (const rule of rules) {
    assert.ok(used.has(rule), `rule deviation ${rule} is never needed`);
  }
  assert.equal(
    tally.failures.length,
    0,
    `${tally.failures.length} cases differ:\n${tally.failures.join("\n")}`,
  );
});
