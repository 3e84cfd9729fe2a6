"""A warm ``pllscore`` for the docs' command-line examples: a fork server.

Every ``pllscore`` command of a docs page used to start a fresh Python that paid the torch and transformers
import (two seconds of a three-second command on two cores). Here one server process imports them once
(:func:`pllscore.cli._start_up`, as a real command does before its model loads), and each command runs in a
process forked from it: its own pid, working folder, environment, standard streams (the client's own file
descriptors, passed over a Unix socket), exit code and ``atexit`` handlers, as a fresh process would have,
only without the import. :mod:`tests.cli_client` is the command the examples call instead of
``.venv/bin/pllscore``; ``tests/test_cli_server.py`` checks that a forked run and a fresh process give the
same output, files and exit code for each command.

Per connection the server forks a handler, which forks the worker that runs the command and reports the
worker's exit status once the worker has ended (its ``atexit`` handlers included, e.g. a Ray it started), so
commands may overlap and a crashed command cannot take the server down.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

MAX_REQUEST = 1 << 20


def receive(conn: socket.socket) -> tuple[dict, list[int]]:
    """The request (argv, cwd, env) and the client's stdin, stdout and stderr."""
    fds = array.array("i")
    chunks, received = [], 0
    while True:
        data, ancdata, _, _ = conn.recvmsg(MAX_REQUEST, socket.CMSG_SPACE(3 * fds.itemsize))
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
        if not data:
            break
        chunks.append(data)
        received += len(data)
        if data.endswith(b"\n"):
            break
    return json.loads(b"".join(chunks)), list(fds)


def _streams() -> None:
    """sys.stdin/stdout/stderr anew over descriptors 0-2, buffered as Python's start-up buffers them."""
    import io

    def text(fd: int, mode: str, line: bool, errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        encoding = os.environ.get("PYTHONIOENCODING") or "utf-8"
        return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, line_buffering=line)

    sys.stdin = sys.__stdin__ = text(0, "r", False, "strict")
    sys.stdout = sys.__stdout__ = text(1, "w", os.isatty(1), "strict")
    sys.stderr = sys.__stderr__ = text(2, "w", True, "backslashreplace")


def _work(request: dict, fds: list[int]) -> NoReturn:
    """In the worker: become the command's process, run it, and end as ``python -m pllscore.cli`` would end."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    _streams()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # as the console script runs: click names the program after argv[0], not after the server's `python -m`
    sys.argv = [os.path.join(os.path.dirname(sys.executable), "pllscore"), *request["argv"]]
    main_module = sys.modules["__main__"]
    main_module.__spec__ = None
    main_module.__package__ = None
    signal.signal(signal.SIGINT, signal.default_int_handler)
    code = 0
    try:
        from pllscore.cli import main

        main()
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:  # sys.exit("message"): the message on stderr, code 1, as the interpreter does
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    # the interpreter's own exit, in its order: non-daemon threads, atexit handlers, the streams
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _handle(conn: socket.socket) -> None:
    """In the handler: fork the worker, wait for it, send its exit status (a signal's death as 128 + N)."""
    request, fds = receive(conn)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _work(request, fds)
    for fd in fds:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    conn.sendall(f"{code if code >= 0 else 128 - code}\n".encode())
    conn.close()


def serve(path: str) -> None:
    """Import what a command imports, say ``ready`` on stdout, then serve connections until killed."""
    from pllscore.cli import _start_up

    _start_up()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the handler waits for its worker
            try:
                _handle(conn)
            finally:
                os._exit(0)
        conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])


def start(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """A running server (its process and socket path) started with env, once it has imported what commands use."""
    folder = tempfile.mkdtemp(prefix="pllscore-cli-")  # /tmp: a Unix socket's path has at most 107 bytes
    path = os.path.join(folder, "socket")
    root = Path(__file__).resolve().parents[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.cli_server", path], cwd=root, env=env, stdout=subprocess.PIPE, text=True
    )
    line = server.stdout.readline() if server.stdout else ""
    if line.strip() != "ready":
        server.kill()
        raise RuntimeError(f"the pllscore fork server did not start (said {line!r})")
    return server, path


@contextlib.contextmanager
def running(env: dict[str, str]) -> Iterator[str]:
    """The socket path of a server that runs while the block runs."""
    server, path = start(env)
    try:
        yield path
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def client_command() -> str:
    """The shell command that stands for ``.venv/bin/pllscore`` (PLLSCORE_TEST_CLI_SERVER names the server)."""
    return f"{sys.executable} -S {Path(__file__).with_name('cli_client.py')}"
