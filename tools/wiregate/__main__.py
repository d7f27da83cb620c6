"""``python -m wiregate`` and the ``wiregate`` command's entry point: the start-up signal guard
(``wiregate.commandline.startup``) goes up before the subcommands are imported."""

from wiregate.commandline.startup import guard


def main() -> None:
    guard("wiregate")
    from wiregate.commandline.pipes import run_command, standard_streams

    standard_streams()
    from wiregate.cli import main as cli

    run_command(cli, "wiregate")


if __name__ == "__main__":
    main()
