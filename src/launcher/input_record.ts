// What a computation read (path or variable; one SHA-256 of all the answers,
// never contents), and whether replaying the reads still answers the same:
// then the cached grant holds. Works by wrapping `Deno`'s read functions; the
// framework reads the environment only via `Deno.env.get` (a hygiene test).

import { sha256Hex } from "../_util/sha256.ts";

/** One read (its answer goes into the record's one digest). */
export interface Observation {
  /** Which read (`env`: a variable, `envall`: the whole environment). */
  op:
    | "read"
    | "bytes"
    | "stat"
    | "lstat"
    | "realpath"
    | "readdir"
    | "env"
    | "envall";
  /** The path or URL as given, or the variable's name. */
  target: string;
}

interface RawObservation extends Observation {
  value: Uint8Array;
}

const encoder = new TextEncoder();

function text(value: string): Uint8Array {
  return encoder.encode(value);
}

function failure(error: unknown): Uint8Array {
  return text(`!${error instanceof Error ? error.name : String(error)}`);
}

function pathOf(path: string | URL): string {
  return path instanceof URL ? path.href : String(path);
}

function asPath(target: string): string | URL {
  return /^file:/.test(target) ? new URL(target) : target;
}

function kindOf(info: Deno.FileInfo): Uint8Array {
  return text(
    info.isSymlink
      ? "symlink"
      : info.isFile
      ? "file"
      : info.isDirectory
      ? "dir"
      : "other",
  );
}

function entriesOf(entries: Deno.DirEntry[]): Uint8Array {
  return text(
    entries.map((e) =>
      `${e.name}:${
        e.isSymlink ? "l" : e.isDirectory ? "d" : e.isFile ? "f" : "o"
      }`
    ).sort().join("\n"),
  );
}

// deno-lint-ignore no-explicit-any
type Answer = (result: any) => Uint8Array;

/** Each file read: the `Deno` function (and its `…Sync`) and how its answer is kept. */
const FILE_READS: [Observation["op"], string, Answer][] = [
  ["bytes", "readFile", (b: Uint8Array) => b],
  ["read", "readTextFile", text],
  ["stat", "stat", kindOf],
  ["lstat", "lstat", kindOf],
  ["realpath", "realPath", text],
];

const envAnswer = (value: string | undefined): Uint8Array =>
  text(value === undefined ? "!unset" : `=${value}`);
const allAnswer = (all: Record<string, string>): Uint8Array =>
  text(JSON.stringify(Object.entries(all).sort()));

function replay(op: Observation["op"], target: string): Uint8Array {
  try {
    if (op === "env") return envAnswer(Deno.env.get(target));
    if (op === "envall") return allAnswer(Deno.env.toObject());
    if (op === "readdir") {
      return entriesOf([...Deno.readDirSync(asPath(target))]);
    }
    const [, name, answer] = FILE_READS.find((r) => r[0] === op)!;
    // deno-lint-ignore no-explicit-any
    return answer((Deno as any)[`${name}Sync`](asPath(target)));
  } catch (error) {
    return failure(error);
  }
}

/** Runs `fn` recording its `Deno` reads (deduplicated); nothing else may run meanwhile. */
export async function recordReads<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; observations: Observation[]; digest: string }> {
  const raw: RawObservation[] = [];
  const note = (op: Observation["op"], path: string | URL, value: Uint8Array) =>
    raw.push({ op, target: pathOf(path), value });
  // deno-lint-ignore no-explicit-any
  const d = Deno as any;
  const env = Deno.env as unknown as Record<string, unknown>;
  const names = [
    ...FILE_READS.flatMap(([, name]) => [name, `${name}Sync`]),
    "readDir",
    "readDirSync",
  ];
  // deno-lint-ignore no-explicit-any
  const saved: Record<string, any> = Object.fromEntries(
    names.map((name) => [name, d[name]]),
  );
  const savedEnv = { get: env.get, toObject: env.toObject };
  const observed = <R>(
    op: Observation["op"],
    path: string | URL,
    value: (result: R) => Uint8Array,
    run: () => R,
  ): R => {
    try {
      const result = run();
      note(op, path, value(result));
      return result;
    } catch (error) {
      note(op, path, failure(error));
      throw error;
    }
  };
  for (const [op, name, value] of FILE_READS) {
    d[name] = async (path: string | URL, ...rest: unknown[]) => {
      try {
        const result = await saved[name](path, ...rest);
        note(op, path, value(result));
        return result;
      } catch (error) {
        note(op, path, failure(error));
        throw error;
      }
    };
    d[`${name}Sync`] = (path: string | URL, ...rest: unknown[]) =>
      observed(op, path, value, () => saved[`${name}Sync`](path, ...rest));
  }
  d.readDirSync = (path: string | URL): Iterable<Deno.DirEntry> =>
    observed(
      "readdir",
      path,
      entriesOf,
      () => [...saved.readDirSync(path) as Iterable<Deno.DirEntry>],
    );
  d.readDir = (path: string | URL): AsyncIterable<Deno.DirEntry> => {
    const entries: Deno.DirEntry[] = [];
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for await (const entry of saved.readDir(path)) entries.push(entry);
          note("readdir", path, entriesOf(entries));
        } catch (error) {
          note("readdir", path, failure(error));
          throw error;
        }
        yield* entries;
      },
    };
  };
  env.get = (name: string): string | undefined => {
    const value = (savedEnv.get as (n: string) => string | undefined).call(
      Deno.env,
      name,
    );
    note("env", name, envAnswer(value));
    return value;
  };
  env.toObject = (): Record<string, string> => {
    const all = (savedEnv.toObject as () => Record<string, string>).call(
      Deno.env,
    );
    note("envall", "", allAnswer(all));
    return all;
  };
  let result: T;
  try {
    result = await fn();
  } finally {
    Object.assign(d, saved);
    Object.assign(env, savedEnv);
  }
  const seen = new Map<string, RawObservation>();
  for (const o of raw) {
    const key = `${o.op}\0${o.target}`;
    // The first answer counts: a later read of the same target saw the
    // computation's own writes, if any.
    if (!seen.has(key)) seen.set(key, o);
  }
  const kept = [...seen.values()];
  return {
    result,
    observations: kept.map(({ op, target }) => ({ op, target })),
    digest: await combined(kept.map((o) => o.value)),
  };
}

function combined(values: Uint8Array[]): Promise<string> {
  const total = values.reduce((n, v) => n + 12 + v.length, 0);
  const all = new Uint8Array(total);
  let at = 0;
  for (const value of values) {
    all.set(text(`${value.length}`.padStart(11, "0") + ":"), at);
    all.set(value, at + 12);
    at += 12 + value.length;
  }
  return sha256Hex(all);
}

/** Whether replaying the reads gives the digest {@linkcode recordReads} returned. */
export async function unchanged(
  observations: readonly Observation[],
  digest: string,
): Promise<boolean> {
  return await combined(observations.map((o) => replay(o.op, o.target))) ===
    digest;
}
