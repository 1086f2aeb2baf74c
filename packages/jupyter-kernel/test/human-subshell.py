"""A human-side client that keeps a kernel busy on an ipykernel 7 subshell (JupyterLab's "New Subshell Console"),
and optionally on the main shell from a second client, until its stdin closes.

Usage: human-subshell.py CONNECTION_FILE [--main]. Prints ``ready`` once the subshell exists, then runs short cells
there (a value, a print, an error, a display) back to back; with ``--main`` a second client also runs short cells
on the main shell, each waiting its turn in the kernel's queue. When stdin closes it prints
``subshell N main M`` (the cells each ran) and exits.
"""

import sys
import threading

from jupyter_client import BlockingKernelClient

SUBSHELL_CELLS = (
    '"sub quick"',
    "42",
    "1/0",
    'print("sub print")',
    'from IPython.display import display\ndisplay("sub display")',
    "import time\ntime.sleep(0.05)\n'sub slept'",
)


def client_for(connection_file: str) -> BlockingKernelClient:
    client = BlockingKernelClient(connection_file=connection_file)
    client.load_connection_file()
    client.start_channels()
    client.wait_for_ready(timeout=30)
    return client


def run_on(client: BlockingKernelClient, code: str, subshell_id: str | None) -> None:
    message = client.session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                                     "user_expressions": {}, "allow_stdin": False,
                                                     "stop_on_error": False})
    if subshell_id is not None:
        message["header"]["subshell_id"] = subshell_id
    client.shell_channel.send(message)
    msg_id = message["header"]["msg_id"]
    while True:
        reply = client.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            return


def main() -> int:
    connection_file = sys.argv[1]
    with_main = "--main" in sys.argv[2:]
    stop = threading.Event()
    counts = {"subshell": 0, "main": 0}

    sub = client_for(connection_file)
    request = sub.session.msg("create_subshell_request", {})
    sub.control_channel.send(request)
    reply = sub.control_channel.get_msg(timeout=30)
    subshell_id = reply["content"]["subshell_id"]

    def on_subshell() -> None:
        index = 0
        while not stop.is_set():
            run_on(sub, SUBSHELL_CELLS[index % len(SUBSHELL_CELLS)], subshell_id)
            counts["subshell"] += 1
            index += 1

    def on_main(client: BlockingKernelClient) -> None:
        index = 0
        while not stop.is_set():
            run_on(client, f'print("person main {index}")\n"person {index}"', None)
            counts["main"] += 1
            index += 1

    threads = [threading.Thread(target=on_subshell, daemon=True)]
    main_client = client_for(connection_file) if with_main else None
    if main_client is not None:
        threads.append(threading.Thread(target=on_main, args=(main_client,), daemon=True))
    for thread in threads:
        thread.start()
    print("ready", flush=True)
    sys.stdin.read()
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    print(f"subshell {counts['subshell']} main {counts['main']}", flush=True)
    sub.stop_channels()
    if main_client is not None:
        main_client.stop_channels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
