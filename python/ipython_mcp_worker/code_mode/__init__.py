"""Code Mode's tool bridge: the agent's tools as synchronous functions in the shell's user namespace."""
