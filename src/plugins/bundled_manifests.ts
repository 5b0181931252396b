/**
 * The `plugin.yaml` documents of the bundled providers, written in code,
 * for a framework loaded from a remote URL (`jsr:`, `https:`): there the
 * bundled directory cannot be listed nor its files read from disk, so
 * discovery takes the bundled providers from here. A test checks that each
 * entry equals its `plugins/memory/<name>/plugin.yaml` parsed as YAML.
 *
 * @module
 */

/** Each bundled provider's `plugin.yaml`, as the YAML parser gives it. */
export const BUNDLED_MANIFESTS: Readonly<Record<string, unknown>> = {
  archive: {
    name: "archive",
    version: "0.1.0",
    description:
      "Reference checkpointing provider: archives the user and assistant text of the transcript under $HERMES_HOME/archive/<session>/ before every lossy compression (pre-compress checkpoint API v2), idempotently and crash-safely.",
    hooks: ["on_pre_compress", "on_session_switch"],
    permissions: { read: [], write: [], env: [], net: [] },
  },
  honcho: {
    name: "honcho",
    version: "1.0.0",
    description:
      "Honcho (plastic-labs) long-term memory: user modelling, dialectic recall, durable turn sync and five memory tools",
    hooks: [
      "on_turn_start",
      "prefetch",
      "queue_prefetch",
      "sync_turn",
      "on_memory_write",
      "on_session_end",
      "on_session_switch",
      "on_pre_compress",
    ],
    profile_clone: true,
    permissions: {
      read: [
        "$HERMES_HOME/honcho.json",
        "$HERMES_ROOT/honcho.json",
        "~/.honcho/config.json",
      ],
      env: [
        "HONCHO_API_KEY",
        "HONCHO_BASE_URL",
        "HONCHO_URL",
        "HONCHO_ENVIRONMENT",
        "HONCHO_TIMEOUT",
        "HONCHO_LOGGING",
        "HONCHO_INJECTION_LOG",
        "HERMES_HONCHO_HOST",
        "HERMES_HOME",
        "HERMES_DATA_DIR_SUFFIX",
        "HOME",
      ],
      net: ["api.honcho.dev"],
    },
    availability: {
      env: ["HONCHO_API_KEY", "HONCHO_BASE_URL", "HONCHO_URL"],
      files: [
        "$HERMES_HOME/honcho.json",
        "$HERMES_ROOT/honcho.json",
        "~/.honcho/config.json",
      ],
    },
  },
};
