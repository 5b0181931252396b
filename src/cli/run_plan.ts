// How the `hermes` CLI is started for a profile (its grant plus the provider's
// worker grant, as `deno run` flags): the launcher runs it, `memory
// permissions` prints it, `deno task compile` bakes it.

import { readProcessEnv } from "../core/env.ts";
import type { HermesConfig } from "../core/memory_provider.ts";
import { getConfigValue, loadConfig } from "../config/config.ts";
import { join, resolve } from "../_util/path.ts";
import { getDefaultHermesRoot } from "../profile/hermes_home.ts";
import { withHermesHome } from "../profile/context_scope.ts";
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
  providerRunFlags,
} from "./_plugins.ts";
import { listProviderNames, locateProvider } from "./_provider_list.ts";
import { commandIntent } from "./arg_scan.ts";
import type { ProviderCommandLine } from "./root_help.ts";
import { cliLocation } from "./cli_location.ts";
import { didYouMean } from "./suggest.ts";

/** How the CLI is started for one profile. */
interface HermesRunPlan {
  hermesHome: string;
  /** The provider whose grant is included, or `null` (built-in only). */
  provider: string | null;
  grant: RunGrant;
  flags: string[];
  /** A path for a local install, else a URL. */
  entry: string;
  env: Record<string, string>;
  /** `deno run <flags> <entry>`. */
  command: string[];
  /** The provider command `hermes --help` lists. */
  providerCommand?: ProviderCommandLine;
  /** Why a configured provider's grant is missing (bad config, unknown provider). */
  problem?: string;
}

/** Options of {@linkcode hermesRunPlan}. */
interface HermesRunPlanOptions {
  hermesHome: string;
  /** Read from the home when absent. */
  config?: HermesConfig;
  /** Default: `memory.provider`. */
  provider?: string;
  /** The command line; setup also gets the configured provider's grant and any host. */
  args?: readonly string[];
}

/** The CLI's start for a profile; a provider grant that cannot be computed is left out, with `problem`. */
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
    const flags = ["--quiet", ...grantToFlags(grant, other), ...location.flags];
    return {
      hermesHome: home,
      provider,
      grant,
      flags,
      entry: location.entry,
      env: { DENO_NO_PROMPT: "1" },
      command: ["deno", "run", ...flags, location.entry],
      ...(providerCommand ? { providerCommand } : {}),
      ...(problem ? { problem } : {}),
    };
  });
}
