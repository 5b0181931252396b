// Small helpers shared by the Honcho provider's modules (private).

/** A non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `error.message` for an `Error`, else the value as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A signal aborted with a `TimeoutError` after `ms` (never if `ms` is not finite) or with `parent`; `clear()` stops both. */
export function deadlineSignal(
  ms: number,
  message: string,
  parent?: AbortSignal,
): { signal: AbortSignal; reason: DOMException; clear(): void } {
  const controller = new AbortController();
  const reason = new DOMException(message, "TimeoutError");
  const onAbort = (): void => controller.abort(parent!.reason);
  parent?.addEventListener("abort", onAbort, { once: true });
  const timer = Number.isFinite(ms)
    ? setTimeout(() => controller.abort(reason), Math.max(0, ms))
    : undefined;
  return {
    signal: controller.signal,
    reason,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}
