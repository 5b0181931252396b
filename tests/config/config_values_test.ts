import assert from "node:assert/strict";
import {
  configFlag,
  configInt,
  configSwitch,
} from "../../src/config/config_values.ts";
import {
  pythonFloat,
  pythonInt,
  pythonTruthy,
} from "../../src/_util/python_values.ts";
import { readMemoryConfig } from "../../src/builtin/memory_files.ts";
import { readOutputSpillSettings } from "../../src/context/prefetch_spill.ts";
import { isCheckpointGateArmed } from "../../src/context/compression_gate.ts";

Deno.test("one coercion table: every flag key reads the same value the same way", () => {
  // Issue: memory_enabled "" was false while output_spill.enabled "" was true.
  for (
    const [value, expected] of [
      ["", false],
      ["false", true],
      ["0", true],
      [null, false],
      [0, false],
      [false, false],
      [true, true],
      [[], false],
    ] as const
  ) {
    const flags = [
      readMemoryConfig({ memory: { memory_enabled: value } }).memoryEnabled,
      readMemoryConfig({ memory: { user_profile_enabled: value } })
        .userProfileEnabled,
      readOutputSpillSettings({ hooks: { output_spill: { enabled: value } } })
        .enabled,
      isCheckpointGateArmed({ compression: { checkpoint_required: value } }),
      configFlag(value, !expected),
    ];
    assert.deepEqual(flags, flags.map(() => expected), JSON.stringify(value));
  }
  assert.equal(configFlag(undefined, true), true);
  assert.equal(configFlag(undefined, false), false);
});

Deno.test("Python's bool(), int() and float() on parsed values", () => {
  assert.equal(pythonTruthy({}), false);
  assert.equal(pythonTruthy({ a: 1 }), true);
  assert.equal(pythonTruthy(NaN), false);
  assert.deepEqual(
    [" 7 ", "1_000", "-3", 3.9, -3.9, true, "1.5", "1e3", "0x10", null, []]
      .map(pythonInt),
    [
      7,
      1000,
      -3,
      3,
      -3,
      1,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ],
  );
  assert.deepEqual(
    ["1e3", " 2.5 ", ".5", "5.", "-inf", "1_0.5", "x", ""].map(pythonFloat),
    [1000, 2.5, 0.5, 5, -Infinity, 10.5, undefined, undefined],
  );
  assert.ok(Number.isNaN(pythonFloat("NaN")));
});

Deno.test("switch words and integers with a minimum", () => {
  for (
    const on of [true, 1, "on", " TRUE ", "yes", "1", "approve", "Enabled"]
  ) {
    assert.equal(configSwitch(on), true, String(on));
  }
  for (const off of [false, 0, 2, "off", "no", "", null, undefined, "y"]) {
    assert.equal(configSwitch(off), false, String(off));
  }
  assert.equal(configInt("42", 5, 1), 42);
  assert.equal(configInt(0, 5, 1), 5);
  assert.equal(configInt(null, 5), 5);
  assert.equal(configInt(-4, 5), -4);
});
