"""``python -m datafactory`` and the ``datafactory`` command's entry point.

Signal handlers are set before anything heavy is imported: a Ctrl-C or SIGTERM while the
command starts up ends it with its one line and exit 130 / 143 (nothing is made yet), not
an import traceback; ``datafactory.interrupts`` takes over for the run.
"""

import os
import signal
import sys
from types import FrameType

_EARLY = {
    signal.SIGINT: (b"datafactory: interrupted\n", 130),
    signal.SIGTERM: (b"datafactory: terminated\n", 143),
}


def _starting(signum: int, frame: FrameType | None) -> None:
    line, code = _EARLY[signal.Signals(signum)]
    os.write(2, line)
    os._exit(code)


#: Subcommands of the ingest endpoint; any other first argument is the exporter's.
_INGEST = ("serve", "store")


def command() -> None:
    for number in _EARLY:
        signal.signal(number, _starting)
    if len(sys.argv) > 1 and sys.argv[1] in _INGEST:
        from datafactory.ingest.cli import main as ingest

        ingest(prog_name="datafactory")
        return
    from datafactory import interrupts
    from datafactory.cli import main

    interrupts.own_process()
    try:
        main(prog_name="datafactory")
    finally:
        interrupts.exiting()


if __name__ == "__main__":
    command()
