import assert from "node:assert/strict";
import { isTrivialPrompt } from "../../src/context/trivial_prompt.ts";

const WORDS = [
  "yes",
  "no",
  "ok",
  "okay",
  "sure",
  "thanks",
  "thank you",
  "y",
  "n",
  "yep",
  "nope",
  "yeah",
  "nah",
  "hi",
  "hey",
  "hello",
  "yo",
  "sup",
  "continue",
  "go ahead",
  "do it",
  "proceed",
  "got it",
  "cool",
  "nice",
  "great",
  "done",
  "next",
  "lgtm",
  "k",
];

Deno.test("isTrivialPrompt() treats empty, blank and missing input as trivial", () => {
  assert.equal(isTrivialPrompt(""), true);
  assert.equal(isTrivialPrompt("   \n\t"), true);
  assert.equal(isTrivialPrompt(null), true);
  assert.equal(isTrivialPrompt(undefined), true);
});

Deno.test("isTrivialPrompt() treats slash commands as trivial", () => {
  assert.equal(isTrivialPrompt("/reset"), true);
  assert.equal(isTrivialPrompt("   /skill review the auth module"), true);
});

Deno.test("isTrivialPrompt() accepts every listed word in any case", () => {
  for (const word of WORDS) {
    assert.equal(isTrivialPrompt(word), true, word);
    assert.equal(isTrivialPrompt(word.toUpperCase()), true, word);
    assert.equal(isTrivialPrompt(`  ${word}  `), true, word);
  }
});

Deno.test("isTrivialPrompt() allows trailing punctuation, quotes, dashes and symbols", () => {
  const tails = [
    "!",
    "?",
    "...",
    " :)",
    "!!!???",
    '"',
    "'",
    "\u2018\u2019",
    "\u201c\u201d",
    " \u2014",
    "\u2013",
    "\u2026",
    " (",
    "[]",
    "{}",
    "<>",
    "*&^%$#@!+=",
    "`",
    "~",
    "\u00a0",
    " ;,:",
  ];
  for (const tail of tails) {
    assert.equal(isTrivialPrompt(`thanks${tail}`), true, JSON.stringify(tail));
    assert.equal(
      isTrivialPrompt(`go ahead${tail}`),
      true,
      JSON.stringify(tail),
    );
  }
});

Deno.test("isTrivialPrompt() rejects words that merely start with a trivial word", () => {
  for (
    const text of [
      "k8s",
      "yolo",
      "note",
      "hive",
      "supper",
      "hello world",
      "okay so what about the deploy",
      "no, use tabs",
      "thanks for the list of AWS regions",
      "nope-not-this",
      "done_with_it",
      "ok1",
    ]
  ) {
    assert.equal(isTrivialPrompt(text), false, text);
  }
});

Deno.test("isTrivialPrompt() rejects ordinary questions", () => {
  assert.equal(isTrivialPrompt("what editor do I use?"), false);
  assert.equal(isTrivialPrompt("remember I prefer tabs"), false);
});
