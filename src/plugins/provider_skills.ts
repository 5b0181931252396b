/**
 * Skills registered by memory providers, qualified as
 * `<provider>:<skill>` (for example `my-provider:maintenance`).
 *
 * @module
 */

import { isAbsolute, isInside, join, resolve } from "../_util/path.ts";
import { getHermesHome } from "../profile/hermes_home.ts";

/** One registered provider skill. */
interface ProviderSkill {
  qualifiedName: string;
  provider: string;
  name: string;
  path: string;
  description: string;
}

/** Options of {@linkcode registerProviderSkill}. */
interface RegisterSkillOptions {
  /**
   * A one-line description.
   *
   * @default {""}
   */
  description?: string;
  /**
   * The profile home whose registry gets the skill.
   *
   * @default {getHermesHome()}
   */
  hermesHome?: string;
  /**
   * The provider's directory: the skill's file must be inside it, and a
   * relative path is resolved against it.
   */
  providerDir?: string;
}

/** Options of the registry queries: the profile home whose registry is used (default `getHermesHome()`). */
type SkillRegistryOptions = Pick<RegisterSkillOptions, "hermesHome">;

const SKILL_NAME_REGEXP = /^[A-Za-z0-9_-]+$/;
const registries = new Map<string, Map<string, ProviderSkill>>();

function registryFor(
  hermesHome: string | undefined,
): Map<string, ProviderSkill> {
  const home = resolve(hermesHome ?? getHermesHome());
  if (!registries.has(home)) registries.set(home, new Map());
  return registries.get(home)!;
}

/**
 * Registers a provider's skill.
 *
 * @throws {RangeError} When the name is invalid, the file does not exist,
 * or it lies outside the provider's directory.
 */
export function registerProviderSkill(
  provider: string,
  name: string,
  path: string,
  options: RegisterSkillOptions = {},
): ProviderSkill {
  if (!SKILL_NAME_REGEXP.test(name)) {
    throw new RangeError(
      `Cannot register skill '${name}' of memory provider '${provider}': a skill name may use only letters, digits, '_' and '-'`,
    );
  }
  const absolute = options.providerDir !== undefined && !isAbsolute(path)
    ? join(options.providerDir, path)
    : resolve(path);
  let real: string;
  try {
    real = Deno.realPathSync(absolute);
    if (!Deno.statSync(real).isFile) throw new Error("not a file");
  } catch {
    throw new RangeError(
      `Cannot register skill '${provider}:${name}': ${absolute} is not an existing SKILL.md file; fix the path passed to ctx.registerSkill()`,
    );
  }
  if (options.providerDir !== undefined) {
    let dir = options.providerDir;
    try {
      dir = Deno.realPathSync(dir);
    } catch {
      // Compare with the path as given.
    }
    if (!isInside(dir, real)) {
      throw new RangeError(
        `Cannot register skill '${provider}:${name}': ${absolute} is outside the provider's directory ${dir}; keep skills inside it`,
      );
    }
  }
  const skill: ProviderSkill = Object.freeze({
    qualifiedName: `${provider}:${name}`,
    provider,
    name,
    path: real,
    description: options.description ?? "",
  });
  registryFor(options.hermesHome).set(skill.qualifiedName, skill);
  return skill;
}

/** Lists the registered provider skills, sorted by qualified name. */
export function listSkills(
  options: SkillRegistryOptions = {},
): ProviderSkill[] {
  return [...registryFor(options.hermesHome).values()].sort((a, b) =>
    a.qualifiedName < b.qualifiedName ? -1 : 1
  );
}

/** Looks a skill up by its qualified name. */
export function getSkill(
  qualifiedName: string,
  options: SkillRegistryOptions = {},
): ProviderSkill | undefined {
  return registryFor(options.hermesHome).get(qualifiedName);
}

/** Reads a registered skill's `SKILL.md` (lazily, at view time); a `RangeError` when none is registered. */
export async function readSkill(
  qualifiedName: string,
  options: SkillRegistryOptions = {},
): Promise<string> {
  const skill = getSkill(qualifiedName, options);
  if (skill === undefined) {
    throw new RangeError(
      `Skill '${qualifiedName}' not found: it is registered only while its memory provider is the active one`,
    );
  }
  return await Deno.readTextFile(skill.path);
}

/**
 * Removes the skills of every provider other than `active` (all provider
 * skills when `active` is `null`).
 */
export function pruneInactiveProviderSkills(
  active: string | null,
  options: SkillRegistryOptions = {},
): string[] {
  const registry = registryFor(options.hermesHome);
  const removed: string[] = [];
  for (const [qualified, skill] of registry) {
    if (skill.provider !== active) {
      registry.delete(qualified);
      removed.push(qualified);
    }
  }
  return removed;
}
