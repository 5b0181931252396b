// Replaces the launcher's process with the CLI (POSIX `execve` through FFI):
// no second process to wait for, so the terminal's signals and the exit
// status are the CLI's own, and no `Deno.Command` (whose first use loads Web
// Streams, about 3 ms of every start). `--allow-ffi` gives the launcher
// nothing `--allow-run` did not; without it, or on Windows, the caller spawns.

import { readWholeProcessEnv } from "../core/env.ts";

const LIBC: Partial<Record<typeof Deno.build.os, string>> = {
  linux: "libc.so.6",
  darwin: "/usr/lib/libSystem.B.dylib",
};

/** Execs `program` with `args` and `env`; returns only when it could not (then nothing has changed). */
export function execProgram(
  program: string,
  args: readonly string[],
  env: Record<string, string>,
): void {
  const libc = LIBC[Deno.build.os];
  if (libc === undefined || !["x86_64", "aarch64"].includes(Deno.build.arch)) {
    return;
  }
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return;
  let library: Deno.DynamicLibrary<{
    execve: { parameters: ["buffer", "buffer", "buffer"]; result: "i32" };
  }>;
  try {
    library = Deno.dlopen(libc, {
      execve: { parameters: ["buffer", "buffer", "buffer"], result: "i32" },
    });
  } catch {
    return;
  }
  const encoder = new TextEncoder();
  const strings = (list: readonly string[]) => {
    const buffers = list.map((s) => encoder.encode(`${s}\0`));
    const pointers = new BigUint64Array(buffers.length + 1);
    buffers.forEach((buffer, i) => {
      pointers[i] = BigInt(
        Deno.UnsafePointer.value(Deno.UnsafePointer.of(buffer)),
      );
    });
    return { buffers, array: new Uint8Array(pointers.buffer) };
  };
  const inherited = readWholeProcessEnv();
  if (inherited !== undefined) {
    const argv = strings([program, ...args]);
    const envp = strings(
      Object.entries({ ...inherited, ...env }).map(([k, v]) => `${k}=${v}`),
    );
    // Returns only on failure (the buffers stay referenced until then).
    library.symbols.execve(argv.buffers[0]!, argv.array, envp.array);
  }
  library.close();
}
