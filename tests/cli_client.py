"""``pllscore`` through the warm fork server of :mod:`tests.cli_server`: run as ``python -S tests/cli_client.py ARGS``.

It hands the server its arguments, working folder, environment and its own standard streams, and exits with
the command's exit code. Without ``PLLSCORE_TEST_CLI_SERVER`` (the server's socket) it becomes
``python -m pllscore.cli ARGS``, a fresh process. Standard library only: ``-S`` keeps its own start-up to
milliseconds.
"""

import array
import json
import os
import socket
import sys

SOCKET = "PLLSCORE_TEST_CLI_SERVER"


def main() -> None:
    path = os.environ.get(SOCKET)
    if not path:
        os.execv(sys.executable, [sys.executable, "-m", "pllscore.cli", *sys.argv[1:]])
    request = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        fds = array.array("i", [0, 1, 2])
        conn.sendmsg([json.dumps(request).encode() + b"\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = conn.recv(64)
            if not chunk:
                sys.exit(f"pllscore (tests/cli_client.py): the fork server at {path} closed without an exit code")
            reply += chunk
    sys.exit(int(reply))


if __name__ == "__main__":
    main()
