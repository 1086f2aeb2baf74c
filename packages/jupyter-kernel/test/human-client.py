"""A human-side client for the tests: runs one cell in a kernel through its connection file with jupyter_client.

Usage: human-client.py CONNECTION_FILE CODE. Prints the reply status, then the text the cell showed.
"""

import sys

from jupyter_client import BlockingKernelClient


def main() -> int:
    connection_file, code = sys.argv[1], sys.argv[2]
    client = BlockingKernelClient(connection_file=connection_file)
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=30)
        shown: list[str] = []

        def collect(message: dict) -> None:
            content = message["content"]
            kind = message["header"]["msg_type"]
            if kind == "stream":
                shown.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                shown.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                shown.append(f"{content['ename']}: {content['evalue']}")

        reply = client.execute_interactive(code, timeout=30, output_hook=collect)
        print(reply["content"]["status"])
        print("".join(shown))
    finally:
        client.stop_channels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
