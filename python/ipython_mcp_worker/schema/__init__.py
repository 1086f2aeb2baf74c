"""The schema fingerprint (canonical JSON, SHA-256) and the JSON Schema of a dynamic tool, from a callable's annotations."""
