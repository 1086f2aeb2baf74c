"""The ipython-mcp worker: one IPython shell, owned by the process main thread, behind a framed IPC channel."""

__version__ = "0.1.0"
