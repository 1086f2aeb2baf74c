"""A human-side watcher for the tests: what a `jupyter console --existing` shows of other clients' work.

Usage: human-watch.py CONNECTION_FILE SECONDS NEEDLE. Subscribes to the kernel's IOPub through its connection file
with jupyter_client, prints "listening" once subscribed, then one JSON line per execute_input and stream message of
any client ({"type", "code"|"text", "execution_count"}), until a stream text contains NEEDLE or SECONDS pass.
"""

import json
import queue
import sys
import time

from jupyter_client import BlockingKernelClient


def main() -> int:
    connection_file, seconds, needle = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    client = BlockingKernelClient(connection_file=connection_file)
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=30)
        # Drain what the ready handshake produced, then say we listen.
        while True:
            try:
                client.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                break
        print("listening", flush=True)
        end = time.time() + seconds
        while time.time() < end:
            try:
                message = client.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            kind = message["header"]["msg_type"]
            content = message["content"]
            if kind == "execute_input":
                print(json.dumps({"type": kind, "code": content["code"], "execution_count": content.get("execution_count")}), flush=True)
            elif kind == "stream":
                print(json.dumps({"type": kind, "text": content["text"]}), flush=True)
                if needle in content["text"]:
                    break
    finally:
        client.stop_channels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
