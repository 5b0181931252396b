// The `register(ctx)` context, and how an imported module becomes one provider:
// its last registration, else the first no-argument `MemoryProvider` subclass
// exported.

import { log } from "./log.ts";
import {
  type HermesConfig,
  isMemoryProvider,
  MemoryProvider,
} from "./memory_provider.ts";
import { errorText } from "../_util/error_text.ts";

/**
 * A skill a provider registered (not yet validated by the host).
 *
 * @category Contract
 */
export interface SkillRegistration {
  /** The skill's name. */
  name: string;
  /** The path of its `SKILL.md` as the provider gave it. */
  path: string;
  /** A one-line description. */
  description: string;
}

/**
 * What `register(ctx)` receives.
 *
 * @category Contract
 */
export interface ProviderRegistrationContext {
  /** The provider's name (directory or package name). */
  readonly providerName: string;
  /**
   * The provider's own sections of `config.yaml` (`<name>`,
   * `memory.provider`, `memory.<name>`), frozen; a sandboxed provider cannot
   * read the file.
   */
  readonly hermesConfig: HermesConfig;
  /** Registers the provider instance; the last call wins. */
  registerMemoryProvider(provider: MemoryProvider): void;
  /**
   * Registers a skill, qualified as `<provider>:<name>`. Registered only
   * when the provider is the active one; errors never cost the provider.
   *
   * @param name Letters, digits, `_` and `-`.
   * @param path Its `SKILL.md`, inside the provider's directory (relative
   * paths are resolved against it).
   */
  registerSkill(name: string, path: string | URL, description?: string): void;
  /** Accepted and ignored: provider CLI commands come from `cli.ts`. */
  registerCliCommand(..._args: unknown[]): void;
  /** Any other `register*` call is accepted and ignored (logged at debug). */
  [key: string]: unknown;
}

/** Options of {@linkcode extractMemoryProvider}. */
interface ExtractOptions {
  /** The provider's name, used in messages and as `ctx.providerName`. */
  providerName: string;
  /** Called for each `ctx.registerSkill()`. */
  onSkill?: (skill: SkillRegistration) => void;
  /** Also accept an exported provider instance (package providers) (default `false`). */
  acceptInstances?: boolean;
  /** The provider's sections of `config.yaml`, as `ctx.hermesConfig`. */
  hermesConfig?: HermesConfig;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** Builds a registration context. */
export function createRegistrationContext(
  providerName: string,
  onProvider: (provider: MemoryProvider) => void,
  onSkill: (skill: SkillRegistration) => void,
  // The provider's sections of `config.yaml`, as `ctx.hermesConfig`.
  options: Pick<ExtractOptions, "hermesConfig"> = {},
): ProviderRegistrationContext {
  const hermesConfig = deepFreeze(structuredClone(options.hermesConfig ?? {}));
  const base = {
    providerName,
    hermesConfig,
    registerMemoryProvider: onProvider,
    registerSkill(
      name: string,
      path: string | URL,
      description: string = "",
    ): void {
      const text = path instanceof URL
        ? decodeURIComponent(path.pathname)
        : String(path);
      onSkill({
        name: String(name),
        path: text,
        description: String(description),
      });
    },
    registerCliCommand(..._args: unknown[]): void {},
  };
  return new Proxy(base, {
    get(target, key, receiver): unknown {
      if (
        typeof key === "string" && !(key in target) &&
        key.startsWith("register")
      ) {
        return (): void => {
          log(
            "debug",
            `Memory provider '${providerName}' called ctx.${key}(), which memory providers cannot use: ignored`,
          );
        };
      }
      return Reflect.get(target, key, receiver);
    },
  }) as ProviderRegistrationContext;
}

function isProviderClass(value: unknown): value is new () => MemoryProvider {
  if (typeof value !== "function" || value === MemoryProvider) return false;
  const proto = (value as { prototype?: unknown }).prototype;
  if (proto === undefined || proto === null) return false;
  if (proto instanceof MemoryProvider) return true;
  const p = proto as Record<string, unknown>;
  return typeof p.isAvailable === "function" &&
    typeof p.initialize === "function" &&
    typeof p.getToolSchemas === "function" &&
    Object.getOwnPropertyDescriptor(proto, "name")?.get !== undefined;
}

/** Turns an imported provider module into one provider instance. */
export async function extractMemoryProvider(
  module: Record<string, unknown>,
  options: ExtractOptions,
): Promise<MemoryProvider | null> {
  const name = options.providerName;
  const register = module.register;
  if (typeof register === "function") {
    let registered: MemoryProvider | null = null;
    const ctx = createRegistrationContext(
      name,
      (provider) => {
        registered = provider;
      },
      (skill) => {
        try {
          options.onSkill?.(skill);
        } catch (error) {
          log(
            "debug",
            `Memory provider '${name}' skill '${skill.name}' not registered: ${
              errorText(error)
            }`,
          );
        }
      },
      { hermesConfig: options.hermesConfig },
    );
    try {
      await register(ctx);
    } catch (error) {
      const after = registered !== null;
      log(
        after ? "warn" : "debug",
        `Memory provider '${name}' register() raised ${
          after
            ? "after registering a provider, using the registered provider"
            : "before registering a provider"
        }: ${errorText(error)}`,
      );
    }
    if (registered !== null) {
      if (isMemoryProvider(registered)) return registered;
      log(
        "debug",
        `Memory provider '${name}' registered something that is not a MemoryProvider: ignored`,
      );
    }
  }
  const keys = Object.keys(module).sort();
  if (options.acceptInstances) {
    const instance = keys.map((k) => module[k]).find((v) =>
      isMemoryProvider(v)
    );
    if (instance !== undefined) return instance as MemoryProvider;
  }
  for (const key of keys) {
    const value = module[key];
    if (!isProviderClass(value)) continue;
    try {
      const instance = new value();
      if (isMemoryProvider(instance)) return instance;
    } catch (error) {
      log(
        "debug",
        `Memory provider '${name}' export ${key} could not be constructed: ${
          errorText(error)
        }`,
      );
    }
  }
  return null;
}
