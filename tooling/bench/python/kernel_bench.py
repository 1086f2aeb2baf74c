"""The Jupyter alternatives, measured through jupyter_client against a real ipykernel (bench venv only).

Usage: python kernel_bench.py N_ROUNDTRIP N_TOOLCALLS CELL
Prints progress lines "pid <kernel pid>" first, then one JSON line:
  roundtrip_ms: per-cell execute_request -> execute_reply + status idle, on one warm kernel;
  stdin: the Jupyter stdin-channel tool-call mechanism (a kernel function that calls input() with the call as JSON,
         the client answering with input_reply after running the tool), timed inside the kernel and at the client.
The kernel is shut down on every exit path.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import sys
import tempfile
import time

TOOL_DEFINITION = '''
import json as _bench_json
def echo(**kwargs):
    """The trivial tool, as a kernel function whose call travels over the Jupyter stdin channel."""
    return _bench_json.loads(input(_bench_json.dumps({"name": "echo", "arguments": kwargs})))
'''

TOOL_LOOP = '''
import time as _bench_time
_bench_values = []
_bench_started = _bench_time.perf_counter()
for _bench_i in range({n}):
    _bench_values.append(echo(x=_bench_i)["x"])
_bench_elapsed = _bench_time.perf_counter() - _bench_started
assert _bench_values == list(range({n})), "wrong tool results"
print("__bench_elapsed__", _bench_elapsed)
'''


def wait_for(kc, msg_id: str, timeout: float = 60.0, answer_stdin=None) -> dict:
    """Waits (blocking in zmq poll, no spinning) for the execute_reply and the idle status of `msg_id`; answers
    stdin requests with `answer_stdin` meanwhile."""
    import zmq

    channels = {"shell": kc.shell_channel, "iopub": kc.iopub_channel}
    if answer_stdin is not None:
        channels["stdin"] = kc.stdin_channel
    poller = zmq.Poller()
    by_socket = {}
    for name, channel in channels.items():
        poller.register(channel.socket, zmq.POLLIN)
        by_socket[channel.socket] = name
    reply = None
    idle = False
    stream_text = []
    deadline = time.monotonic() + timeout
    while reply is None or not idle:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("kernel did not answer in time")
        for socket, _ in poller.poll(int(remaining * 1000)):
            name = by_socket[socket]
            try:
                message = channels[name].get_msg(timeout=0)
            except queue.Empty:
                continue
            if name == "stdin":
                answer_stdin(kc, message)
            elif message["parent_header"].get("msg_id") != msg_id:
                continue
            elif name == "shell":
                reply = message
            elif message["msg_type"] == "stream":
                stream_text.append(message["content"]["text"])
            elif message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                idle = True
    reply["_stream"] = "".join(stream_text)
    return reply


def measure_stdin_calls(kc, n_tools: int) -> dict:
    """The stdin-channel tool-call loop: define echo() in the kernel, warm up, then time n_tools calls."""
    served = {"calls": 0}

    def answer(client, request) -> None:
        if request["msg_type"] != "input_request":
            return
        call = json.loads(request["content"]["prompt"])
        result = dict(call["arguments"])  # the trivial tool: echo its arguments back
        served["calls"] += 1
        client.input(json.dumps(result))

    reply = wait_for(kc, kc.execute(TOOL_DEFINITION), answer_stdin=answer)
    if reply["content"]["status"] != "ok":
        raise SystemExit(f"tool definition failed: {reply['content']}")
    wait_for(kc, kc.execute(TOOL_LOOP.format(n=300), allow_stdin=True), timeout=600, answer_stdin=answer)
    served["calls"] = 0
    started = time.perf_counter_ns()
    reply = wait_for(kc, kc.execute(TOOL_LOOP.format(n=n_tools), allow_stdin=True), timeout=600, answer_stdin=answer)
    client_elapsed = (time.perf_counter_ns() - started) / 1e9
    if reply["content"]["status"] != "ok":
        raise SystemExit(f"stdin tool loop failed: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    kernel_elapsed = None
    for line in reply["_stream"].splitlines():
        if line.startswith("__bench_elapsed__"):
            kernel_elapsed = float(line.split()[1])
    return {"calls": served["calls"], "kernel_loop_s": kernel_elapsed, "client_wall_s": client_elapsed}


def main() -> int:
    n_roundtrip, n_tools, cell = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    import ipykernel
    import jupyter_client
    from jupyter_client.manager import KernelManager

    # Unix-socket transport, as IPython Code Mode uses on Linux; socket files live in a private temp directory.
    sockets = tempfile.mkdtemp(prefix="ipython-mcp-bench-kernel-")
    km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "kernel-ipc"))
    km.start_kernel()
    try:
        pid = getattr(getattr(km, "provisioner", None), "pid", None)
        print(f"pid {pid}", flush=True)
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        import IPython

        # Warm-up, then the measured loop: send, then wait for the reply and the idle status of that request.
        for _ in range(20):
            wait_for(kc, kc.execute(cell))
        samples = []
        for _ in range(n_roundtrip):
            started = time.perf_counter_ns()
            msg_id = kc.execute(cell)
            reply = wait_for(kc, msg_id)
            samples.append((time.perf_counter_ns() - started) / 1e6)
            if reply["content"]["status"] != "ok":
                raise SystemExit(f"kernel cell failed: {reply['content']}")

        stdin = None
        if n_tools > 0:
            stdin = measure_stdin_calls(kc, n_tools)
        print(json.dumps({
            "roundtrip_ms": samples,
            "stdin": stdin,
            "versions": {"ipykernel": ipykernel.__version__, "jupyter_client": jupyter_client.__version__,
                         "ipython": IPython.__version__, "python": sys.version.split()[0]},
        }), flush=True)
        kc.stop_channels()
    finally:
        km.shutdown_kernel(now=True)
        shutil.rmtree(sockets, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
