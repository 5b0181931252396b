import assert from "node:assert/strict";
import { extractUserInstructionFromSkillMessage } from "../../src/context/skill_invocation.ts";

const HEAD =
  '[IMPORTANT: The user has invoked the "review" skill, indicating they want you to follow ' +
  "its instructions. The full skill content is loaded below.]";
const MARKER =
  "The user has provided the following instruction alongside the skill invocation: ";

Deno.test("extractUserInstructionFromSkillMessage() passes ordinary messages through", () => {
  assert.equal(
    extractUserInstructionFromSkillMessage("fix the login bug"),
    "fix the login bug",
  );
  assert.equal(extractUserInstructionFromSkillMessage(""), "");
  assert.equal(extractUserInstructionFromSkillMessage(null), null);
  assert.equal(extractUserInstructionFromSkillMessage(["x"]), null);
});

Deno.test("extractUserInstructionFromSkillMessage() keeps only the user's instruction of a /skill turn", () => {
  const body = `\n\n# Review\nA body that quotes "${MARKER}never this".`;
  assert.equal(
    extractUserInstructionFromSkillMessage(
      `${HEAD}${body}\n\n${MARKER}check the auth module`,
    ),
    "check the auth module",
  );
  assert.equal(
    extractUserInstructionFromSkillMessage(
      `${HEAD}${body}\n\n${MARKER}  trim me \n\n[Runtime note: cwd]`,
    ),
    "trim me",
  );
});

Deno.test("extractUserInstructionFromSkillMessage() returns null for a bare invocation", () => {
  assert.equal(
    extractUserInstructionFromSkillMessage(`${HEAD}\n\n# Review\nbody`),
    null,
  );
  assert.equal(
    extractUserInstructionFromSkillMessage(`${HEAD}\n\n# body\n\n${MARKER}   `),
    null,
  );
  assert.equal(
    extractUserInstructionFromSkillMessage(
      "[IMPORTANT: The user has invoked the unknown]",
    ),
    null,
  );
});

Deno.test("extractUserInstructionFromSkillMessage() handles skill bundles in both layouts", () => {
  const first =
    '[IMPORTANT: The user has invoked the "ship" skill bundle, loading a, b]' +
    '\nUser instruction: cut release 1.2\n\n[Loaded as part of the "a" skill:]\n\nbody a';
  assert.equal(
    extractUserInstructionFromSkillMessage(first),
    "cut release 1.2",
  );
  const last =
    "[IMPORTANT: The user has invoked a skill bundle, loading a, b]" +
    '\n\n[Loaded as part of the "a" skill:]\n\nbody\nUser instruction: deploy it';
  assert.equal(extractUserInstructionFromSkillMessage(last), "deploy it");
  const bare = "[IMPORTANT: The user has invoked a skill bundle, loading a]" +
    '\n\n[Loaded as part of the "a" skill:]\n\nbody' +
    "\nUser instruction: (no additional instruction — invoke the skill(s))";
  assert.equal(extractUserInstructionFromSkillMessage(bare), null);
});
