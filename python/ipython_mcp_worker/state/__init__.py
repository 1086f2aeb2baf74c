"""Namespace snapshots (--state FILE): saving and restoring the user's names, and the file format."""
