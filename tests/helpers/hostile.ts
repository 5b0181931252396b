// The world of the hostile-provider suite: a user's home with the default
// profile `~/.hermes` (holding `.env`, `config.yaml`, `MEMORY.md`) and a
// second profile `~/.hermes/profiles/other` inside it, as Hermes lays them
// out, with the hostile `intruder` and the well-behaved `notes` installed
// the ordinary way, in `~/.hermes/plugins/`. Plus the library host that
// runs attacks in a child process (tests/helpers/hostile_host.ts).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { approveInstalled, installFixture, REPO } from "./plugin_fixtures.ts";
import { runDeno } from "./deno_child.ts";

/** The files an attack aims at. */
export interface HostileWorld extends AsyncDisposable {
  /** `$HOME`. */
  userHome: string;
  /** The default profile, `$HOME/.hermes`. */
  home: string;
  /** Another profile, `$HOME/.hermes/profiles/other`. */
  other: string;
  /** `$HOME/.hermes/plugins`. */
  plugins: string;
  /** The intruder's directory. */
  intruderDir: string;
  /** An empty directory (no bundled providers). */
  noBundled: string;
}

/** Secrets the attacks must never see. */
export const SECRETS = {
  home: "sk-default-profile-secret-0001",
  other: "sk-other-profile-secret-0002",
};

/**
 * Creates the world; `config` is the default profile's `config.yaml`.
 *
 * @param config The text of `~/.hermes/config.yaml`.
 */
export async function hostileWorld(config = ""): Promise<HostileWorld> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-hostile-" }),
  );
  const userHome = join(root, "user");
  const home = join(userHome, ".hermes");
  const other = join(home, "profiles", "other");
  const plugins = join(home, "plugins");
  const noBundled = join(root, "no-bundled");
  for (
    const dir of [
      plugins,
      join(home, "memories"),
      join(other, "memories"),
      noBundled,
    ]
  ) {
    await Deno.mkdir(dir, { recursive: true });
  }
  await Deno.writeTextFile(
    join(home, ".env"),
    `OPENAI_API_KEY=${SECRETS.home}\n`,
  );
  await Deno.writeTextFile(join(home, "config.yaml"), config);
  await Deno.writeTextFile(
    join(home, "memories", "MEMORY.md"),
    "the user's notes\n",
  );
  await Deno.writeTextFile(
    join(other, ".env"),
    `OPENAI_API_KEY=${SECRETS.other}\n`,
  );
  await Deno.writeTextFile(
    join(other, "config.yaml"),
    "memory:\n  provider: ''\n",
  );
  await Deno.writeTextFile(
    join(other, "memories", "MEMORY.md"),
    "the other profile's notes\n",
  );
  const intruderDir = await installFixture(plugins, "intruder");
  await installFixture(plugins, "notes");
  // Both installed the ordinary way and approved with 'hermes memory setup'.
  await approveInstalled(home, ["intruder", "notes"]);
  return {
    userHome,
    home,
    other,
    plugins,
    intruderDir,
    noBundled,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** One attack's outcome, as the child host printed it. */
export interface AttackLine {
  attack: string;
  result?: unknown;
  error?: { name: string; message: string };
  /** Warnings the host logged while it ran. */
  warnings: string[];
  /** What the intruder answered next (`ProviderWorkerStoppedError` once stopped). */
  after: unknown;
}

/** What the child library host reported. */
export interface HostileRun {
  /** Its exit code (143 had a SIGTERM reached it). */
  code: number;
  /** Warnings logged while the providers loaded. */
  loadWarnings: string[];
  lines: AttackLine[];
  /** The last line: the host and the other provider after all attacks. */
  host?: {
    host: string;
    notes: string;
    homeUnchanged: boolean;
    cwdUnchanged: boolean;
  };
  stdout: string;
  stderr: string;
}

const HOST = fileURLToPath(new URL("./hostile_host.ts", import.meta.url));

/**
 * Runs attacks in a child library host (`-A`: the worker sandbox is the
 * only barrier) that loads the providers through loadMemoryProvider.
 *
 * @param world The world.
 * @param attacks `{attack, …args, fresh?}` each; `fresh` loads a new intruder first.
 * @param transport The sandbox transport (default: the loader's choice).
 */
export async function runHostileHost(
  world: HostileWorld,
  attacks: Record<string, unknown>[],
  transport?: "process" | "worker",
): Promise<HostileRun> {
  const { code, stdout, stderr } = await runDeno([
    "run",
    "--quiet",
    "-A",
    "--no-prompt",
    "--cached-only",
    `--config=${join(REPO, "deno.json")}`,
    HOST,
    world.home,
    world.noBundled,
    JSON.stringify(attacks),
    ...(transport ? [transport] : []),
  ], { cwd: REPO, env: { HOME: world.userHome } });
  const parsed = stdout.split("\n").filter((l) => l.startsWith("{")).map((
    l,
  ) => JSON.parse(l));
  const loaded = parsed.find((l) => l.loaded === true);
  const last = parsed.at(-1);
  const host = last?.host === "alive" ? last : undefined;
  return {
    code,
    loadWarnings: loaded?.warnings ?? [],
    lines: parsed.filter((l) => typeof l.attack === "string"),
    host,
    stdout,
    stderr,
  };
}
