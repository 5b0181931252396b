// Replays tests/fixtures/hermes_vectors/config_yaml.json (Hermes Agent
// 0.19.0's hermes_cli.config.load_config on config.yaml files that do not
// parse or are not a mapping) against loadConfig(): where 0.19.0 read the
// file, the memory settings are the same; where it warned, kept a
// `.corrupt.<time>.bak` copy and ran on defaults, this project stops with
// one ConfigError naming the file and writes nothing (deviation
// yaml-broken-config).
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, getConfigValue, loadConfig } from "@hermes/memory";
import { deviationsFor, loadFixture, Tally } from "./_vectors.ts";

interface Case {
  id: string;
  input: string;
  memory: { provider: string; memory_char_limit: number };
  warned: boolean;
  files_after: string[];
}

Deno.test("config.yaml: every recorded file loads as 0.19.0 loads it, or stops with one error where 0.19.0 runs on defaults", async () => {
  const fixture = await loadFixture<Case>("config_yaml.json");
  const deviations = await deviationsFor("yaml");
  const tally = new Tally("config_yaml");
  for (const c of fixture.cases) {
    const home = await Deno.makeTempDir({ prefix: "hv_cfg_" });
    const failures: string[] = [];
    try {
      await Deno.writeTextFile(join(home, "config.yaml"), c.input);
      const loaded = await loadConfig({ hermesHome: home }).catch((e) => e);
      const files = [...Deno.readDirSync(home)].map((e) => e.name).sort();
      const deviation = deviations.get(c.id);
      if (deviation) {
        // The promise instead: one error naming the file, nothing written.
        if (!(loaded instanceof ConfigError)) {
          failures.push(`expected a ConfigError, got ${loaded}`);
        } else if (!loaded.message.includes(join(home, "config.yaml"))) {
          failures.push(`the error does not name the file: ${loaded.message}`);
        }
        if (files.join() !== "config.yaml") failures.push(`wrote ${files}`);
        if (failures.length > 0) {
          tally.failures.push(`${c.id}: ${failures.join("; ")}`);
        } else tally.deviating++;
        continue;
      }
      if (loaded instanceof Error) {
        failures.push(`we threw ${loaded.message}`);
      } else {
        const provider = getConfigValue(loaded, "memory.provider") ?? "";
        const limit = getConfigValue(loaded, "memory.memory_char_limit") ??
          2200;
        if (
          provider !== c.memory.provider || limit !== c.memory.memory_char_limit
        ) {
          failures.push(
            `ours ${provider}/${limit}, python ${JSON.stringify(c.memory)}`,
          );
        }
        if (c.warned) failures.push("Hermes warned here");
        if (files.join() !== c.files_after.join()) {
          failures.push(`files ${files}`);
        }
      }
      tally.add(c.id, failures, undefined);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  }
  console.log(tally.report());
  assert.equal(tally.failures.length, 0, tally.failures.join("\n"));
});
