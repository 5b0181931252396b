import assert from "node:assert/strict";
import { join } from "node:path";
import {
  getSkill,
  listSkills,
  pruneInactiveProviderSkills,
  readSkill,
  registerProviderSkill,
} from "../../src/plugins/provider_skills.ts";
import { tempHome, writeProvider } from "../helpers/plugin_fixtures.ts";

Deno.test("registerProviderSkill() qualifies the name and reads SKILL.md lazily", async () => {
  await using h = await tempHome();
  const dir = await writeProvider(h.plugins, "notes", {
    "skills/tidy/SKILL.md": "v1",
  });
  const skill = registerProviderSkill("notes", "tidy", "skills/tidy/SKILL.md", {
    providerDir: dir,
    hermesHome: h.home,
    description: "Tidy up",
  });
  assert.equal(skill.qualifiedName, "notes:tidy");
  await Deno.writeTextFile(join(dir, "skills/tidy/SKILL.md"), "v2");
  assert.equal(await readSkill("notes:tidy", { hermesHome: h.home }), "v2");
  assert.deepEqual(
    listSkills({ hermesHome: h.home }).map((s) => s.qualifiedName),
    ["notes:tidy"],
  );
  assert.equal(listSkills({ hermesHome: h.outside }).length, 0);
});

Deno.test("registerProviderSkill() refuses bad names, missing files and files outside the provider", async () => {
  await using h = await tempHome();
  const dir = await writeProvider(h.plugins, "notes", { "SKILL.md": "x" });
  await Deno.writeTextFile(join(h.outside, "secret.md"), "secret");
  const options = { providerDir: dir, hermesHome: h.home };
  assert.throws(
    () => registerProviderSkill("notes", "bad name", "SKILL.md", options),
    /Cannot register skill 'bad name' of memory provider 'notes': a skill name may use only letters, digits, '_' and '-'/,
  );
  assert.throws(
    () => registerProviderSkill("notes", "gone", "nope/SKILL.md", options),
    /Cannot register skill 'notes:gone': .*nope\/SKILL\.md is not an existing SKILL\.md file/,
  );
  assert.throws(
    () =>
      registerProviderSkill(
        "notes",
        "steal",
        join(h.outside, "secret.md"),
        options,
      ),
    /is outside the provider's directory/,
  );
  await Deno.symlink(join(h.outside, "secret.md"), join(dir, "linked.md"));
  assert.throws(
    () => registerProviderSkill("notes", "steal2", "linked.md", options),
    /is outside the provider's directory/,
  );
  assert.equal(listSkills({ hermesHome: h.home }).length, 0);
});

Deno.test("pruneInactiveProviderSkills() makes the old provider's skills not found after a switch", async () => {
  await using h = await tempHome();
  const a = await writeProvider(h.plugins, "a", { "SKILL.md": "a" });
  const b = await writeProvider(h.plugins, "b", { "SKILL.md": "b" });
  registerProviderSkill("a", "one", "SKILL.md", {
    providerDir: a,
    hermesHome: h.home,
  });
  registerProviderSkill("b", "two", "SKILL.md", {
    providerDir: b,
    hermesHome: h.home,
  });
  assert.deepEqual(pruneInactiveProviderSkills("b", { hermesHome: h.home }), [
    "a:one",
  ]);
  assert.equal(getSkill("a:one", { hermesHome: h.home }), undefined);
  await assert.rejects(
    readSkill("a:one", { hermesHome: h.home }),
    /Skill 'a:one' not found: it is registered only while its memory provider is the active one/,
  );
  assert.deepEqual(pruneInactiveProviderSkills(null, { hermesHome: h.home }), [
    "b:two",
  ]);
});
