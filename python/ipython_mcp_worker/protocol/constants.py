"""Generated from fixtures/protocol/*.json by tooling/scripts/gen-protocol.mjs: do not edit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

# The IPC protocol version both sides must speak: the hello and configure messages name it (docs/protocol.md).
PROTOCOL_VERSION = 1
# Binary image forms a result keeps as base64 and an MCP client gets as image content.
IMAGE_MIME_TYPES = ("image/png", "image/jpeg")
# The largest single image, in base64 characters (2 MiB): the worker drops a larger one, the server does not send it as image content.
MAX_IMAGE_BASE64_CHARS = 2097152
# 2^31 - 1: Node's longest timer delay in ms (a longer one fires at once), and the largest SyntaxError line number the worker reports.
MAX_INT32 = 2147483647
# The fields of execute's result that run_code replaces by one ordered output (bridge.py never builds them; operations.ts omits them from the schema).
RUN_CODE_DROPPED_FIELDS = ("stdout", "stderr", "stdout_omitted_chars", "stderr_omitted_chars")
# Every stable error code the parent and the worker use (error-codes.json).
ERROR_CODE_LIST = ("runtime_busy", "queue_timeout", "runtime_closed", "runtime_unavailable", "operation_timeout", "operation_cancelled", "memory_limit", "invalid_request", "invalid_arguments", "message_too_large", "protocol_error", "name_not_found", "not_callable", "binding_failed", "call_raised", "result_not_json", "protected_name", "invalid_name", "name_collision", "unsupported_signature", "registry_full", "stale_registration", "tool_not_found", "job_not_found", "startup_failed", "worker_crashed", "internal_error")
# Codes whose operation never ran, so the caller may simply try again (error-codes.json).
RETRYABLE_ERROR_CODE_LIST = ("runtime_busy", "queue_timeout")
# IPython's own bindings in the user namespace (runtime-names.json).
RUNTIME_NAME_LIST = ("In", "Out", "get_ipython", "exit", "quit", "open")
# Why a value has no canonical JSON form, one code per reason (fixtures/schema-fingerprint/error-codes.json).
CANONICAL_JSON_ERROR_CODE_LIST = ("non_finite_number", "unsafe_integer", "lone_surrogate", "non_string_key", "unsupported_type", "circular_reference")


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


# Each limit's smallest and largest value (None: no bound but the int itself), by wire name (worker-limits.json).
WORKER_LIMIT_BOUNDS: Mapping[str, tuple[int, int | None]] = MappingProxyType({
    "max_text_chars": (1, None),
    "max_repr_chars": (1, None),
    "max_traceback_chars": (1, None),
    "max_results": (1, None),
    "max_display_items": (1, None),
    "max_json_depth": (1, None),
    "max_tool_name_chars": (1, None),
    "max_tool_description_chars": (1, None),
    "max_dynamic_tools": (1, None),
    "max_ipc_message_bytes": (1, 4294967295),
})


@dataclass(frozen=True)
class OperationFacts:
    """What one worker operation does beyond its params and result (operation-facts.json)."""

    # What the operation does to the dynamic tool catalog. `changes`: it edits the registry itself (the response carries the registry's revision even when the registry is empty, and the parent reconciles after every call). `may-change`: it may run code that redefines or deletes the callables behind dynamic tools (the parent reconciles when the revision moved, or, without one, when it holds registrations). `none`: the parent never reconciles after it.
    catalog_effect: Literal["none", "may-change", "changes"]
    # Whether the worker reconciles its registry after the operation (when it holds registrations) and stops trusting its last reconciliation before it starts. False only where nothing can have changed (health) or the operation is the reconciliation (discover).
    worker_reconciles: bool
    # Whether the whole text of a truncated stdout or stderr goes to a spill file that the result names.
    spills_streams: bool
    # Whether the operation may call back into the host while it runs (Code Mode's tools, answered over the channel mid-operation). In a Jupyter kernel such an operation runs as the kernel's own cell and its calls travel on that cell's stdin channel (the shell channel is busy running it); one sent over the comm is refused.
    calls_host: bool
    # Whether, in a Jupyter kernel, the operation runs as the kernel's own cell (an execute_request whose metadata carries the ipython-mcp marker, its code the cell's code: it lands in In/Out and the history, and the person's clients see it) instead of as a request on the comm. execute with blank code, which runs no cell, still goes over the comm.
    kernel_cell: bool


# Every operation's facts, by operation name; the worker's handler table serves exactly these operations.
OPERATION_FACTS: Mapping[str, OperationFacts] = MappingProxyType({
    "health": OperationFacts(catalog_effect="none", worker_reconciles=False, spills_streams=False, calls_host=False, kernel_cell=False),
    "execute": OperationFacts(catalog_effect="may-change", worker_reconciles=True, spills_streams=True, calls_host=False, kernel_cell=True),
    "list": OperationFacts(catalog_effect="none", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "search": OperationFacts(catalog_effect="none", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "inspect": OperationFacts(catalog_effect="none", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "call_function": OperationFacts(catalog_effect="may-change", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "reload": OperationFacts(catalog_effect="may-change", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "remove": OperationFacts(catalog_effect="may-change", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "reset": OperationFacts(catalog_effect="changes", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "register_tool": OperationFacts(catalog_effect="changes", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "unregister_tool": OperationFacts(catalog_effect="changes", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "discover": OperationFacts(catalog_effect="none", worker_reconciles=False, spills_streams=False, calls_host=False, kernel_cell=False),
    "call_tool": OperationFacts(catalog_effect="may-change", worker_reconciles=True, spills_streams=False, calls_host=False, kernel_cell=False),
    "define_tools": OperationFacts(catalog_effect="may-change", worker_reconciles=True, spills_streams=False, calls_host=True, kernel_cell=False),
    "run_code": OperationFacts(catalog_effect="may-change", worker_reconciles=True, spills_streams=False, calls_host=True, kernel_cell=True),
})
