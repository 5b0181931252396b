/**
 * `deno task compile`: builds `dist/hermes`, a single binary of the CLI
 * with the grant of the profile it is run for baked in (the plan
 * `hermes memory permissions` prints for that profile: its home, its
 * provider's grant, the user's grants from `config.yaml`). A binary cannot
 * change its permissions later: build it again after changing the
 * profile's provider or grants, or build one per profile
 * (`deno task compile --profile coder`).
 *
 * ```sh
 * deno task compile [--profile NAME] [--output PATH] [--dry-run]
 * ```
 *
 * `--dry-run` prints the `deno compile` command as JSON instead of running
 * it.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { readProcessEnv } from "../core/env.ts";
import { resolveCliHome } from "../cli/global_args.ts";
import { hermesRunPlan } from "../cli/run_plan.ts";
import { cliCacheStep, cliLocation } from "../cli/cli_location.ts";

/** Options of {@linkcode compileCommand}. */
export interface CompileOptions {
  /** The profile whose grant is baked in (default: `HERMES_HOME`). */
  profile?: string;
  /** The binary to write. @default {"dist/hermes"} */
  output?: string;
}

/** The `deno compile` arguments: the plan's flags, the computed-path modules, output and entry. */
export async function compileCommand(
  options: CompileOptions = {},
): Promise<string[]> {
  const home = resolveCliHome(options.profile, readProcessEnv);
  const plan = await hermesRunPlan({ hermesHome: home });
  const location = cliLocation();
  if (location.dir === undefined) {
    throw new Error(
      "deno task compile needs a local checkout of @hermes/memory",
    );
  }
  return [
    "compile",
    // A compiled binary runs providers in workers (transport.ts): no deno
    // child to start.
    ...plan.flags.filter((f) =>
      f !== "--quiet" && !f.startsWith("--allow-run=")
    ),
    // Lazy loads and worker entries are not static imports: the folders
    // holding them are included whole (deno compile analyses each module).
    "--include",
    `${location.dir}/plugins/memory/`,
    "--include",
    `${location.dir}/src/`,
    "--output",
    options.output ?? "dist/hermes",
    plan.entry,
  ];
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      profile: { type: "string" },
      output: { type: "string" },
      "dry-run": { type: "boolean", default: false },
    },
  });
  const args = await compileCommand({
    profile: values.profile,
    output: values.output,
  });
  if (values["dry-run"]) {
    console.log(JSON.stringify(["deno", ...args]));
    Deno.exit(0);
  }
  // The modules must be in Deno's cache (the compile runs --cached-only).
  const step = cliCacheStep();
  const cached = await new Deno.Command(Deno.execPath(), {
    args: step.args,
    cwd: step.cwd,
    stdin: "null",
  }).spawn().status;
  if (!cached.success) Deno.exit(cached.code);
  console.error(`deno ${args.join(" ")}`);
  const status = await new Deno.Command(Deno.execPath(), {
    args,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  Deno.exit(status.code);
}
