"""The gate of the IPC reader thread: whether it watches fd 3 (channel.py), switched by the main thread.

Closing a closed gate or opening an open one does nothing, so callers switch it without tracking its state.

The main thread reads fd 3 itself between operations and during nested calls; the reader thread must then not
wait on fd 3 (two threads waiting on one pipe are both woken by every frame), and parking it must not wake it.
"""

from __future__ import annotations

import os
import select


class EpollGate:
    """Whether the reader thread watches fd_in, switched by the main thread without waking it (Linux).

    The reader thread waits in ``epoll_wait``; closing the gate sets fd_in's events to none with
    ``epoll_ctl`` (the kernel keeps only hang-up, which the main thread, the reader then, sees too), opening it
    sets them back, and the kernel wakes the reader thread then only if a frame is already waiting."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._epoll = select.epoll()
        self._epoll.register(fd, select.EPOLLIN)
        self._events = select.EPOLLIN

    def wait(self) -> None:
        self._epoll.poll()

    def close(self) -> None:
        self._modify(0)

    def open(self) -> None:
        self._modify(select.EPOLLIN)

    def _modify(self, events: int) -> None:
        if events == self._events:
            return  # already so: no system call
        self._events = events
        try:
            self._epoll.modify(self._fd, events)
        except OSError:
            pass  # user code closed or replaced fd_in: the next read of it ends the worker (Channel._read_message)


class PipeGate:
    """The same gate without epoll: the reader thread polls fd_in and a wake-up pipe, and each switch writes
    one byte to the pipe so that the reader thread starts or stops watching fd_in (it wakes for that)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._watching = select.poll()
        self._watching.register(fd, select.POLLIN)
        self._watching.register(self._wake_r, select.POLLIN)
        self._parked = select.poll()
        self._parked.register(self._wake_r, select.POLLIN)
        self._closed = False

    def wait(self) -> None:
        while True:
            closed = self._closed
            events = (self._parked if closed else self._watching).poll()
            frame = False
            for fd, _ in events:
                if fd == self._wake_r:
                    try:
                        os.read(self._wake_r, 4096)
                    except BlockingIOError:
                        pass
                else:
                    frame = True
            if frame and not self._closed:
                return

    def _switch(self, closed: bool) -> None:
        if closed == self._closed:
            return  # already so: the reader thread need not wake
        self._closed = closed
        try:
            os.write(self._wake_w, b"\0")
        except BlockingIOError:
            pass  # the pipe is full of wake-ups the reader thread has yet to drain: it will look again

    def close(self) -> None:
        self._switch(True)

    def open(self) -> None:
        self._switch(False)


def make_gate(fd: int) -> EpollGate | PipeGate:
    """The epoll gate where there is epoll (Linux), else the wake-up-pipe gate."""
    if hasattr(select, "epoll"):
        return EpollGate(fd)
    return PipeGate(fd)
