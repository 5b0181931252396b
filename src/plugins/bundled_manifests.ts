/**
 * The bundled providers' `plugin.yaml` documents in code, for a framework
 * loaded from a remote URL (whose directory cannot be listed).
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
      env: ["HONCHO_API_KEY", "HONCHO_BASE_URL"],
      files: [
        "$HERMES_HOME/honcho.json",
        "$HERMES_ROOT/honcho.json",
        "~/.honcho/config.json",
      ],
    },
  },
};

/**
 * The text of each bundled `plugin.yaml`, byte for byte: while a file still
 * reads exactly this, discovery takes {@linkcode BUNDLED_MANIFESTS} and
 * loads no YAML parser. A test checks both against the files.
 */
export const BUNDLED_MANIFEST_SOURCES: Readonly<Record<string, string>> = {
  archive:
    "name: archive\nversion: 0.1.0\ndescription: >-\n  Reference checkpointing provider: archives the user and assistant text of the\n  transcript under $HERMES_HOME/archive/<session>/ before every lossy\n  compression (pre-compress checkpoint API v2), idempotently and crash-safely.\nhooks:\n  - on_pre_compress\n  - on_session_switch\n# Nothing beyond its data directory $HERMES_HOME/archive/ (read and write)\n# and its own code (read).\npermissions:\n  read: []\n  write: []\n  env: []\n  net: []\n",
  honcho:
    "name: honcho\nversion: 1.0.0\ndescription: \"Honcho (plastic-labs) long-term memory: user modelling, dialectic recall, durable turn sync and five memory tools\"\nhooks:\n  - on_turn_start\n  - prefetch\n  - queue_prefetch\n  - sync_turn\n  - on_memory_write\n  - on_session_end\n  - on_session_switch\n  - on_pre_compress\nprofile_clone: true\n# What the provider's sandbox gets besides its data directory\n# $HERMES_HOME/honcho/ (outbox, locks; read and write) and its own code\n# (read). Its settings files are read-only: only the host CLI writes them.\npermissions:\n  read:\n    - $HERMES_HOME/honcho.json\n    - $HERMES_ROOT/honcho.json\n    - ~/.honcho/config.json\n  env:\n    - HONCHO_API_KEY\n    - HONCHO_BASE_URL\n    - HONCHO_ENVIRONMENT\n    - HONCHO_TIMEOUT\n    - HONCHO_LOGGING\n    - HONCHO_INJECTION_LOG\n    - HERMES_HONCHO_HOST\n    - HERMES_HOME\n    - HERMES_DATA_DIR_SUFFIX\n    - HOME\n  net:\n    - api.honcho.dev\n# Configured (for 'hermes memory list') when a key or URL is set, or a\n# settings file exists; the active provider is always asked itself.\navailability:\n  env:\n    - HONCHO_API_KEY\n    - HONCHO_BASE_URL\n  files:\n    - $HERMES_HOME/honcho.json\n    - $HERMES_ROOT/honcho.json\n    - ~/.honcho/config.json\n",
};
