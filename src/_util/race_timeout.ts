// One bounded wait, shared by the manager's fan-out and the sandbox.

/** `pending`'s value, or `undefined` when it does not settle within `ms` (`Infinity`: no bound); rejections propagate. */
export function raceTimeout<T>(
  pending: Promise<T>,
  ms: number,
): Promise<T | undefined> {
  if (ms === Infinity) return pending;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, ms));
  });
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}
