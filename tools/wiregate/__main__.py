"""``python -m wiregate`` and the ``wiregate`` command's entry point: the start-up signal guard
(``wiregate.commandline.startup``) goes up before the subcommands are imported."""

import sys

from wiregate.commandline.startup import guard


def main() -> None:
    guard("wiregate")
    from wiregate.commandline.pipes import EXIT_CLOSED_STDOUT, flush_stdout, standard_streams

    standard_streams()
    from wiregate.cli import main as cli

    try:
        cli(prog_name="wiregate")
    finally:  # what is still buffered goes out now, or the reader had gone: exit 141
        if not flush_stdout():
            sys.exit(EXIT_CLOSED_STDOUT)


if __name__ == "__main__":
    main()
