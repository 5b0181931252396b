// Stand-in for `src/cli/main.ts` while the plugin loader does not mount the
// active provider's `cli.ts` yet: the same `hermes` tree (`buildProgram`),
// the same home resolution, and `hermes honcho` mounted through the
// provider's `registerCli` only while `memory.provider` is `honcho`, exactly
// as `attachProviderCommand` does. `tests/helpers/honcho_cli.ts` switches
// to the real main.ts as soon as that one mounts `hermes honcho`.
import { CommanderError } from "commander";
import { buildProgram } from "../../src/cli/main.ts";
import {
  type CliContext,
  CliExit,
  denoCliIo,
  USAGE_EXIT_CODE,
} from "../../src/cli/mod.ts";
import { resolveCliHome, scanGlobalArgs } from "../../src/cli/global_args.ts";
import { getConfigValue, loadConfig } from "../../src/config.ts";
import { withHermesHome } from "../../src/hermes_home.ts";
import { setLogger } from "../../src/log.ts";
import { registerCli } from "../../plugins/memory/honcho/cli.ts";

async function run(args: string[]): Promise<number> {
  const io = denoCliIo();
  const context: CliContext = { io, exitCode: 0 };
  const scan = scanGlobalArgs(args);
  let home: string;
  try {
    home = resolveCliHome(scan.profile, (name) => io.env(name));
  } catch (error) {
    io.stderr(`error: ${(error as Error).message}\n`);
    return USAGE_EXIT_CODE;
  }
  setLogger({
    log(level, message): void {
      if (level === "warn" || level === "error") {
        io.stderr(`hermes: ${level}: ${message}\n`);
      }
    },
  });
  return await withHermesHome(home, async () => {
    try {
      const program = buildProgram(context);
      let active = "";
      try {
        const value = getConfigValue(await loadConfig(), "memory.provider");
        active = typeof value === "string" ? value.trim() : "";
      } catch {
        active = "";
      }
      if (active === "honcho" && (scan.command ?? "honcho") === "honcho") {
        const command = program.command("honcho")
          .summary("Manage honcho memory plugin")
          .description("Manage honcho memory plugin");
        registerCli(command);
      }
      await program.parseAsync(args, { from: "user" });
      return context.exitCode;
    } catch (error) {
      if (error instanceof CliExit) return error.exitCode;
      if (error instanceof CommanderError) {
        if (error.code === "commander.helpDisplayed") return 0;
        if (error.code === "commander.help") return USAGE_EXIT_CODE;
        return error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
      }
      io.stderr(`error: ${(error as Error).message}\n`);
      return 1;
    }
  });
}

if (import.meta.main) {
  Deno.exit(await run(Deno.args));
}
