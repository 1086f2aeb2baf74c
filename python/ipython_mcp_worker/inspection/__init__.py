"""Reading live objects without running user code: static attribute lookup, signatures and their text, data summaries."""
