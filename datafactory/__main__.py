"""``python -m datafactory`` and the ``datafactory`` command's entry point.

The start-up signal guard (``wiregate.commandline.startup``) goes up before anything heavy is
imported: a Ctrl-C or SIGTERM while the command starts up ends it with its one line and exit
130 / 143 (nothing is made yet), not an import traceback; ``datafactory.interrupts`` takes
over for the run.
"""

import sys

from wiregate.commandline.pipes import run_command, standard_streams
from wiregate.commandline.startup import guard

#: Subcommands of the ingest endpoint; any other first argument is the exporter's.
_INGEST = ("serve", "store")


def command() -> None:
    guard("datafactory")
    standard_streams()
    if len(sys.argv) > 1 and sys.argv[1] in _INGEST:
        from datafactory.ingest.cli import main as ingest

        run_command(ingest, "datafactory")
        return
    from datafactory import interrupts
    from datafactory.cli import main

    interrupts.own_process()
    try:
        run_command(main, "datafactory")
    finally:
        interrupts.exiting()


if __name__ == "__main__":
    command()
