// The launcher's slow path (`hermesRunPlan`), loaded only when no cached
// launch record fits.

import { readProcessEnv } from "../core/env.ts";
import { HermesHomeUnknownError } from "../profile/hermes_home.ts";
import { type Logger, setLogger } from "../core/log.ts";
import { resolveCliHome } from "../cli/global_args.ts";
import { scanGlobalArgs } from "../cli/arg_scan.ts";
import { hermesRunPlan } from "../cli/run_plan.ts";
import { cliLocation } from "../cli/cli_location.ts";
import {
  frameworkDir,
  grantToFlags,
  HERMES_ENV_VARS,
  TERMINAL_ENV_VARS,
} from "../cli/run_flags.ts";
import { ROOT_HELP_ENV } from "../cli/root_help.ts";
import { getConfigPath, PARSED_CONFIG_ENV } from "../config/config.ts";
import { handConfig, parseConfigText } from "../config/config_yaml.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import type { LaunchRecord } from "./launch_cache.ts";
import { foundLinks, LINKS_ENV } from "../sandbox/grant.ts";

const SILENT: Logger = { log(): void {} };

/** `config.yaml` parsed once and handed to the CLI; `undefined` when missing or broken. */
async function parseConfig(
  home: string,
): Promise<{ config: HermesConfig; handed?: string } | undefined> {
  const path = getConfigPath(home);
  try {
    const text = await Deno.readTextFile(path);
    const config = await parseConfigText(path, text);
    return { config, handed: await handConfig(text, config) };
  } catch {
    return undefined;
  }
}

/** The launch record (no observations); warnings are silenced: the CLI prints them itself. */
export async function computeLaunch(
  args: string[],
): Promise<Pick<LaunchRecord, "denoArgs" | "env">> {
  const previous = setLogger(SILENT);
  try {
    let home: string;
    try {
      home = resolveCliHome(scanGlobalArgs(args).profile, readProcessEnv);
    } catch (error) {
      // An unreadable home is this process's own problem: never guess one.
      if (error instanceof HermesHomeUnknownError) throw error;
      // A bad --profile: the CLI reports it, needing only its own files.
      const location = cliLocation();
      const framework = frameworkDir();
      const flags = grantToFlags({
        read: framework ? [framework] : [],
        write: [],
        env: [...HERMES_ENV_VARS, ...TERMINAL_ENV_VARS],
        net: [],
      });
      return {
        denoArgs: [
          "run",
          "--quiet",
          ...flags,
          ...location.flags,
          location.entry,
        ],
        env: { DENO_NO_PROMPT: "1", [ROOT_HELP_ENV]: "{}" },
      };
    }
    const parsed = await parseConfig(home);
    const plan = await hermesRunPlan({
      hermesHome: home,
      args,
      config: parsed?.config,
    });
    return {
      denoArgs: ["run", ...plan.flags, plan.entry],
      env: {
        ...plan.env,
        [ROOT_HELP_ENV]: JSON.stringify(plan.providerCommand ?? {}),
        // Only in the sealed record (launch_cache.ts), and the CLI's
        // environment, which no provider process inherits or may read.
        ...(parsed?.handed ? { [PARSED_CONFIG_ENV]: parsed.handed } : {}),
        // Where approved paths the CLI may not read lead (grant.ts).
        [LINKS_ENV]: JSON.stringify(foundLinks()),
      },
    };
  } finally {
    setLogger(previous);
  }
}
