// Nothing `hermes` does deletes or rewrites anything under
// $HERMES_HOME/plugins/: the tree (names, kinds, sizes, modes, mtimes and
// contents) is snapshotted before and after every command, in-process and
// as a real process.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";
import {
  main,
  memoryCliIo,
  type RecordedPrompt,
  type ScriptedAnswer,
} from "../../src/cli/mod.ts";
import { withHome } from "../helpers/test_home.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");

const KEEPER_MOD = `
import { getHermesHome, MemoryProvider, type ConfigField, type ToolSchema } from "@hermes/memory";
export class KeeperProvider extends MemoryProvider {
  get name(): string { return "keeper"; }
  isAvailable(): boolean { return true; }
  initialize(): void {}
  getToolSchemas(): ToolSchema[] { return []; }
  override getConfigSchema(): ConfigField[] {
    return [
      { key: "token", secret: true, env_var: "KEEPER_TOKEN" },
      { key: "shelf", default: "main" },
    ];
  }
  override async saveConfig(values: Record<string, unknown>, home: string): Promise<void> {
    await Deno.writeTextFile(home + "/keeper/keeper.json", JSON.stringify(values));
  }
  override prefetch(): string { return "kept"; }
  override async syncTurn(user: string): Promise<void> {
    await Deno.writeTextFile(getHermesHome() + "/keeper/keeper.log", user + "\\n", { append: true });
  }
}
`;

const KEEPER_CLI = `
import type { HermesCommand } from "@hermes/memory/cli";
export function registerCli(command: HermesCommand): void {
  command.command("shelf").action(() => { command.context.io.stdout("main\\n"); });
}
`;

/** A temporary profile home with the plugins of this tree. */
function withPluginsHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  return withHome(fn, writePlugins);
}

async function writePlugins(home: string): Promise<void> {
  const keeper = join(home, "plugins", "keeper");
  await Deno.mkdir(join(keeper, "data"), { recursive: true });
  await Deno.writeTextFile(join(keeper, "mod.ts"), KEEPER_MOD);
  await Deno.writeTextFile(join(keeper, "cli.ts"), KEEPER_CLI);
  await Deno.writeTextFile(
    join(keeper, "plugin.yaml"),
    "name: keeper\ndescription: Keeps things\npermissions:\n  env: [KEEPER_TOKEN]\n",
  );
  await Deno.writeTextFile(join(keeper, "data", "state.bin"), "\u0000\u0001");
  // A wrapper directory and marker file that are not providers at all.
  const wrapper = join(home, "plugins", "mnemosyne");
  await Deno.mkdir(wrapper, { recursive: true });
  await Deno.writeTextFile(
    join(wrapper, "mnemosyne-wrapper.json"),
    '{"keep": true}\n',
  );
  await Deno.chmod(join(wrapper, "mnemosyne-wrapper.json"), 0o640);
  await Deno.writeTextFile(join(home, "plugins", "README.txt"), "mine\n");
  // Old mtimes, so a rewrite with the same bytes would still show.
  const old = new Date("2020-01-01T00:00:00Z");
  for await (const path of walk(join(home, "plugins"))) {
    await Deno.utime(path, old, old);
  }
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    yield path;
  }
}

async function snapshot(home: string): Promise<Record<string, string>> {
  const root = join(home, "plugins");
  const result: Record<string, string> = {};
  for await (const path of walk(root)) {
    const info = await Deno.lstat(path);
    const content = info.isFile
      ? Array.from(
        new Uint8Array(
          await crypto.subtle.digest("SHA-256", await Deno.readFile(path)),
        ),
      ).map((b) => b.toString(16).padStart(2, "0")).join("")
      : "";
    result[relative(root, path)] = [
      info.isDirectory ? "dir" : info.isSymlink ? "link" : "file",
      info.size,
      (info.mode ?? 0).toString(8),
      info.mtime?.toISOString(),
      content,
    ].join(" ");
  }
  return result;
}

Deno.test("no hermes command changes anything under $HERMES_HOME/plugins/ (in-process)", async () => {
  await withPluginsHome(async (home) => {
    const transcript = join(home, "chat.jsonl");
    await Deno.writeTextFile(
      transcript,
      '{"role":"user","content":"hi there"}\n{"role":"assistant","content":"hello"}\n',
    );
    const commands: [string[], ScriptedAnswer[]][] = [
      [["--help"], []],
      [["memory", "status"], []],
      [["memory", "status", "--json"], []],
      [["memory", "list"], []],
      [["memory", "permissions", "keeper"], []],
      [["memory", "setup"], ["keeper", true, "tok-123456", "attic"]],
      [["memory", "status"], []],
      [["keeper", "shelf"], []],
      [["memory", "recall", "what is kept"], []],
      [["memory", "import", transcript], []],
      [["memory", "setup", "keeper", "--yes", "--set", "shelf=cellar"], []],
      // Built-in only: the last entry (keeper, the active one, is preselected).
      [["memory", "setup"], [(p: RecordedPrompt) => p.choices?.at(-1)?.value]],
      [["memory", "off"], []],
      [["memory", "reset", "--yes"], []],
      [["memory", "setup", "keeper"], ["keeper-token-2", "x"]],
      [["memory", "setup", "builtin"], []],
    ];
    const before = await snapshot(home);
    assert.ok(Object.keys(before).length >= 8);
    for (const [args, answers] of commands) {
      const io = memoryCliIo({
        env: { HERMES_HOME: home },
        stdinIsTerminal: answers.length > 0,
        answers,
      });
      const code = await main(args, io);
      assert.equal(code, 0, `${args.join(" ")}: ${io.err}`);
      assert.deepEqual(await snapshot(home), before, args.join(" "));
    }
    // The commands did their work elsewhere in the home.
    assert.ok(
      (await Deno.readTextFile(join(home, "keeper", "keeper.log"))).includes(
        "hi there",
      ),
    );
    assert.ok((await Deno.readTextFile(join(home, ".env"))).includes(
      "KEEPER_TOKEN=",
    ));
  });
});

Deno.test("no hermes command changes $HERMES_HOME/plugins/ (real process)", async () => {
  await withPluginsHome(async (home) => {
    const before = await snapshot(home);
    const hermes = async (args: string[]): Promise<void> => {
      const output = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "--cached-only",
          `--allow-read=${home},${ROOT}`,
          `--allow-write=${home}`,
          "--allow-env",
          // The CLI starts each sandboxed provider as a deno child.
          `--allow-run=${Deno.execPath()}`,
          "src/cli/main.ts",
          ...args,
        ],
        cwd: ROOT,
        clearEnv: true,
        env: { HOME: home, HERMES_HOME: home, PATH: "/usr/bin:/bin", DENO_DIR },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(
        output.code,
        0,
        `${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`,
      );
      assert.deepEqual(await snapshot(home), before, args.join(" "));
    };
    await hermes(["memory", "status"]);
    await hermes(["memory", "setup", "keeper", "--yes", "--set", "token=t-99"]);
    await hermes(["memory", "status"]);
    await hermes(["memory", "off"]);
    await hermes(["memory", "reset", "--yes"]);
  });
});
