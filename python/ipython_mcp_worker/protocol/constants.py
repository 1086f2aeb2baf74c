"""Generated from fixtures/protocol/*.json by tooling/scripts/gen-protocol.mjs: do not edit."""

from __future__ import annotations

from dataclasses import dataclass

# Binary image forms a result keeps as base64 and an MCP client gets as image content.
IMAGE_MIME_TYPES = ("image/png", "image/jpeg")
# The largest single image, in base64 characters (2 MiB): the worker drops a larger one, the server does not send it as image content.
MAX_IMAGE_BASE64_CHARS = 2097152
# 2^31 - 1: Node's longest timer delay in ms (a longer one fires at once), and the largest SyntaxError line number the worker reports.
MAX_INT32 = 2147483647
# The fields of execute's result that run_code replaces by one ordered output (bridge.py deletes them; operations.ts omits them).
RUN_CODE_DROPPED_FIELDS = ("stdout", "stderr", "stdout_omitted_chars", "stderr_omitted_chars")
# Every stable error code the parent and the worker use (error-codes.json).
ERROR_CODE_LIST = ("runtime_busy", "queue_timeout", "runtime_closed", "runtime_unavailable", "operation_timeout", "operation_cancelled", "memory_limit", "invalid_request", "invalid_arguments", "message_too_large", "protocol_error", "name_not_found", "not_callable", "binding_failed", "call_raised", "result_not_json", "protected_name", "invalid_name", "name_collision", "unsupported_signature", "registry_full", "stale_registration", "tool_not_found", "startup_failed", "worker_crashed", "internal_error")
# Codes whose operation never ran, so the caller may simply try again (error-codes.json).
RETRYABLE_ERROR_CODE_LIST = ("runtime_busy", "queue_timeout")
# IPython's own bindings in the user namespace (runtime-names.json).
RUNTIME_NAME_LIST = ("In", "Out", "get_ipython", "exit", "quit", "open")


@dataclass(frozen=True)
class WorkerLimitDefaults:
    """The limits the worker enforces, by wire name, at their defaults (worker-limits.json)."""

    # Returned text size in characters (stdout, stderr, values, docs).
    max_text_chars: int = 8192
    # Representation size in characters in search and inspect.
    max_repr_chars: int = 1024
    # Traceback size in characters.
    max_traceback_chars: int = 4096
    # Items kept in lists, mappings and discovery results.
    max_results: int = 100
    # Display payloads kept per cell.
    max_display_items: int = 20
    # Nesting depth of returned JSON.
    max_json_depth: int = 6
    # Length of a dynamic tool's name.
    max_tool_name_chars: int = 64
    # Length of a dynamic tool's description.
    max_tool_description_chars: int = 1024
    # Live dynamic tools.
    max_dynamic_tools: int = 100
    # Largest frame either side may send, in bytes.
    max_ipc_message_bytes: int = 4194304
