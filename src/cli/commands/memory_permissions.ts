// `hermes memory permissions [provider] [--json]`: the exact `deno run` flags
// the configuration needs (the CLI's own grant plus the provider's).

import type { HermesCommand } from "../hermes_command.ts";
import { ioAction, writeJson } from "../format.ts";
import { hermesRunPlan } from "../run_plan.ts";
import { getHermesHome } from "../../profile/hermes_home.ts";
import { loadConfig } from "../../config/config.ts";

export function registerMemoryPermissions(
  memory: HermesCommand,
): HermesCommand {
  const command = memory.command("permissions")
    .argument(
      "[provider]",
      "Provider to compute for (default: memory.provider)",
    )
    .summary("Print the deno run flags the configuration needs")
    .description(
      "Print the exact 'deno run' flags the active configuration needs: --no-prompt\n" +
        "and --cached-only, read/write of the profile home, read of the framework,\n" +
        "the environment variables read, the provider's grant (its own commands\n" +
        "run in the CLI), and --allow-run of deno: the provider itself runs in its\n" +
        "own deno process under exactly its grant.",
    )
    .option("--json", "Print flags and grant as JSON", false)
    .example("hermes memory permissions")
    .example("hermes memory permissions honcho --json");
  // Exits 1 when the named provider does not exist.
  return ioAction(
    command,
    async (io, opts: { json: boolean }, provider?: string) => {
      const home = getHermesHome();
      // Read here, not in the plan: an unreadable config.yaml is an error of
      // this command (reported as a permission problem when it is one).
      const config = await loadConfig();
      const plan = await hermesRunPlan({ hermesHome: home, config, provider });
      if (plan.problem !== undefined) {
        io.stderr(
          `error: ${plan.problem}; run 'hermes memory list' to see the installed ones\n`,
        );
        return 1;
      }
      const { flags, grant, env, command: run } = plan;
      if (opts.json) {
        writeJson(io, {
          hermesHome: home,
          provider: plan.provider,
          flags,
          grant,
          env,
          command: run,
        });
        return 0;
      }
      io.stdout(
        `# hermes, profile home ${home}, ${
          plan.provider ? `provider '${plan.provider}'` : "built-in memory only"
        }\n# the launcher ('deno task hermes', or 'hermes' from 'deno install -g') runs exactly this:\nDENO_NO_PROMPT=1 deno run \\\n  ${
          flags.join(" \\\n  ")
        } \\\n  ${plan.entry}\n`,
      );
      return 0;
    },
  );
}
