"""The value contract: live values as bounded JSON, the repair of a message that fails to encode, exceptions as error details."""
