/**
 * The one computation of how the `hermes` CLI is started for a profile:
 * the grant (the CLI's own needs plus the active provider's worker grant,
 * which the host must hold to hand it on) rendered as `deno run` flags,
 * and the entry point. The launcher runs exactly this command, `hermes
 * memory permissions` prints it, and `deno task compile` bakes it.
 *
 * @module
 */

import { readProcessEnv } from "../core/env.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import { join, resolve } from "node:path";
import {
  getDefaultHermesRoot,
  withHermesHome,
} from "../profile/hermes_home.ts";
import { errorText } from "../_util/error_text.ts";
import {
  cliGrant,
  grantFromFlags,
  grantToFlags,
  mergeGrants,
  type RunGrant,
} from "./run_flags.ts";
import {
  describeProviderCommand,
  isBuiltinSentinel,
  listProviderNames,
  locateProvider,
  providerRunFlags,
} from "./_plugins.ts";
import { commandIntent } from "./arg_scan.ts";
import type { ProviderCommandLine } from "./root_help.ts";
import { cliLocation } from "./cli_location.ts";
import { didYouMean } from "./suggest.ts";

/** How the CLI is started for one profile. */
interface HermesRunPlan {
  /** The profile home. */
  hermesHome: string;
  /** The provider whose grant is included, or `null` (built-in only). */
  provider: string | null;
  /** The merged grant. */
  grant: RunGrant;
  /** The `deno run` flags, permission flags included. */
  flags: string[];
  /** The CLI entry point: a path for a local install, else a URL. */
  entry: string;
  /** Variables the command sets. */
  env: Record<string, string>;
  /** The whole command: `deno run <flags> <entry>`. */
  command: string[];
  /** The provider command `hermes --help` lists, if any. */
  providerCommand?: ProviderCommandLine;
  /**
   * Why the provider's grant is missing although one is configured (an
   * unreadable `config.yaml`, an unknown provider); the CLI reports it.
   */
  problem?: string;
}

/** Options of {@linkcode hermesRunPlan}. */
interface HermesRunPlanOptions {
  /** The profile home. */
  hermesHome: string;
  /** The loaded `config.yaml` (read from the home when absent). */
  config?: HermesConfig;
  /** The provider to include (default: `memory.provider`). */
  provider?: string;
  /**
   * The command line the plan is for. A setup command also gets the grant
   * of the provider it configures (every provider's for the picker) and
   * may connect to any host, to test the server the user types before it
   * is saved; other commands get the active provider's grant only.
   */
  args?: readonly string[];
}

/**
 * Computes how the CLI is started for a profile: its own grant merged
 * with the active (or named) provider's, as flags. A broken or
 * unreadable `config.yaml`, or an unknown provider, leaves the provider's
 * grant out and says why in `problem` (the CLI itself reports it).
 */
export function hermesRunPlan(
  options: HermesRunPlanOptions,
): Promise<HermesRunPlan> {
  const home = options.hermesHome;
  return withHermesHome(home, async () => {
    let config = options.config;
    let problem: string | undefined;
    if (config === undefined) {
      try {
        config = await loadConfig({ hermesHome: home });
      } catch (error) {
        problem = errorText(error);
        config = {};
      }
    }
    const raw = options.provider ?? getConfigValue(config, "memory.provider");
    const setting = typeof raw === "string" ? raw.trim() : "";
    let provider = setting !== "" && !isBuiltinSentinel(setting)
      ? setting
      : null;
    let providerFlags: string[] = [];
    let providerCommand: ProviderCommandLine | undefined;
    if (provider !== null) {
      if (await locateProvider(provider) === null) {
        const names = await listProviderNames().catch(() => [] as string[]);
        problem = `memory provider '${provider}' was not found${
          didYouMean(provider, names)
        }`;
        provider = null;
      } else {
        // Setup asks the user to approve the provider's whole request, then
        // loads it in the same run: the host holds all of it (past the
        // floor); the provider still gets only what is approved.
        const approving = options.args !== undefined &&
          ["*", provider].includes(commandIntent(options.args).setup ?? "");
        try {
          providerFlags = await providerRunFlags(provider, config, {
            approveAll: approving,
          });
        } catch (error) {
          // A grant Deno would misread (a comma in a path): left out.
          problem = errorText(error);
        }
        providerCommand = await describeProviderCommand(provider);
      }
    }
    const intent = options.args ? commandIntent(options.args) : {};
    const setup = intent.setup;
    const setupFlags: string[] = [];
    if (setup !== undefined) {
      const names = setup === "*" ? await listProviderNames() : [setup];
      for (const name of names) {
        if (name === provider || await locateProvider(name) === null) continue;
        try {
          setupFlags.push(
            ...await providerRunFlags(name, config, { approveAll: true }),
          );
        } catch (error) {
          problem ??= errorText(error);
        }
      }
    }
    const { grant: providerGrant, other } = grantFromFlags([
      ...providerFlags,
      ...setupFlags,
    ]);
    const grant = mergeGrants(cliGrant(home), providerGrant);
    // What the user named on this command line, for this run only.
    const userHome = readProcessEnv("HOME") ?? "";
    const named = options.args ? commandIntent(options.args).reads ?? [] : [];
    for (const path of named) {
      const full = resolve(path.replace(/^~(?=\/|$)/, userHome));
      if (!grant.read.includes(full)) grant.read.push(full);
    }
    if (setup !== undefined) {
      // Any host: the server the user types is tested before it is saved.
      grant.net = [];
      other.push("--allow-net");
    }
    const location = cliLocation();
    // Each sandboxed provider runs in its own `deno run` process.
    other.push(`--allow-run=${Deno.execPath()}`);
    // The default profile's home holds the other profiles: the CLI never
    // reaches them, except for a command whose job spans profiles.
    const root = resolve(getDefaultHermesRoot());
    if (resolve(home) === root && !intent.spansProfiles) {
      const profiles = join(root, "profiles");
      if (!profiles.includes(",")) {
        other.push(`--deny-read=${profiles}`, `--deny-write=${profiles}`);
      }
    }
    const flags = [
      "--quiet",
      ...grantToFlags(grant, other),
      ...location.flags,
    ];
    const env = { DENO_NO_PROMPT: "1" };
    return {
      hermesHome: home,
      provider,
      grant,
      flags,
      entry: location.entry,
      env,
      command: ["deno", "run", ...flags, location.entry],
      ...(providerCommand ? { providerCommand } : {}),
      ...(problem ? { problem } : {}),
    };
  });
}
