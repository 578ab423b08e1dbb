"""`smtbench guard --what TEXT -- CMD ...`: run a heavy step as a child and say plainly when the
kernel's out-of-memory killer ended it (Snakemake alone reports only 'exit status 137')."""
from __future__ import annotations

import argparse
import signal
import sys


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser("guard", help="run a command; report an OOM kill or other signal clearly")
    p.add_argument("--what", required=True, help="what the command does, for the message")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import procs
    from ..resources import describe_exit, mem_available_bytes

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise ValueError("guard: no command given (use: smtbench guard --what TEXT -- CMD ...)")
    proc = procs.Popen(cmd)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait()
    if rc != 0:
        avail = mem_available_bytes() / 2**30
        print(f"smtbench: {args.what} failed: {describe_exit(rc)}; {avail:.1f} GiB available now",
              file=sys.stderr)
    return 0 if rc == 0 else (137 if rc == -signal.SIGKILL else (rc if rc > 0 else 128 - rc))
