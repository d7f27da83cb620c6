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
    finally:  # what is still buffered goes out now, or the command's report is incomplete
        failed = flush_stdout()
        if isinstance(failed, BrokenPipeError):
            sys.exit(EXIT_CLOSED_STDOUT)
        if failed is not None:  # a full disk, say: an I/O error
            sys.stderr.write(f"wiregate: error: standard output: {failed.strerror}\n")
            sys.exit(2)


if __name__ == "__main__":
    main()
