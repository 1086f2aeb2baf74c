"""Generated from fixtures/protocol/constants.json by tooling/scripts/gen-protocol.mjs: do not edit."""

from __future__ import annotations

# Binary image forms a result keeps as base64 and an MCP client gets as image content.
IMAGE_MIME_TYPES = ("image/png", "image/jpeg")
# The largest single image, in base64 characters (2 MiB): the worker drops a larger one, the server does not send it as image content.
MAX_IMAGE_BASE64_CHARS = 2097152
# 2^31 - 1: Node's longest timer delay in ms (a longer one fires at once), and the largest SyntaxError line number the worker reports.
MAX_INT32 = 2147483647
# The fields of execute's result that run_code replaces by one ordered output (bridge.py deletes them; operations.ts omits them).
RUN_CODE_DROPPED_FIELDS = ("stdout", "stderr", "stdout_omitted_chars", "stderr_omitted_chars")
# Codes whose operation never ran, so the caller may simply try again (error-codes.json).
RETRYABLE_ERROR_CODE_LIST = ("runtime_busy", "queue_timeout")
# IPython's own bindings in the user namespace (runtime-names.json).
RUNTIME_NAME_LIST = ("In", "Out", "get_ipython", "exit", "quit", "open")
