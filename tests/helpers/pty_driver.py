#!/usr/bin/env python3
"""Runs a command in a pseudo-terminal and relays bytes both ways.

Usage: pty_driver.py ROWS COLS -- COMMAND [ARGS...]

Bytes read from this process's stdin are written to the terminal (so a test
can type keys, arrows and Ctrl-C); everything the command prints to the
terminal is copied to this process's stdout. When the command ends, the
driver exits with the command's exit code (128 + N when killed by signal N).
Closing this process's stdin sends nothing: to send end-of-file, write the
terminal's EOF character (Ctrl-D).
"""

import errno
import fcntl
import os
import select
import signal
import struct
import sys
import termios


def main() -> int:
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.stderr.write("usage: pty_driver.py ROWS COLS -- COMMAND [ARGS...]\n")
        return 2
    rows, cols = int(sys.argv[1]), int(sys.argv[2])
    argv = sys.argv[4:]

    pid, master = os.forkpty()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as error:
            os.write(2, f"pty_driver: cannot run {argv[0]}: {error}\n".encode())
        os._exit(127)

    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    stdin_fd = sys.stdin.fileno()
    stdout_fd = sys.stdout.fileno()
    stdin_open = True
    status = None

    while True:
        watched = [master] + ([stdin_fd] if stdin_open else [])
        try:
            ready, _, _ = select.select(watched, [], [], 0.05)
        except InterruptedError:
            continue
        if master in ready:
            try:
                data = os.read(master, 65536)
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                data = b""
            if data:
                os.write(stdout_fd, data)
            else:
                break
        if stdin_open and stdin_fd in ready:
            data = os.read(stdin_fd, 65536)
            if data:
                os.write(master, data)
            else:
                stdin_open = False
        if status is None:
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = code
                # Drain what is left, then stop.
                while True:
                    r, _, _ = select.select([master], [], [], 0.1)
                    if not r:
                        break
                    try:
                        data = os.read(master, 65536)
                    except OSError:
                        break
                    if not data:
                        break
                    os.write(stdout_fd, data)
                break

    if status is None:
        _, status = os.waitpid(pid, 0)
    os.close(master)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
