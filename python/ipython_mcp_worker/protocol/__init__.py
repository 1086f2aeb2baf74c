"""What both sides agree on (generated constants, error codes, limits, parameter checks) and the context every operation handler is built with. Imports nothing else of the worker."""
