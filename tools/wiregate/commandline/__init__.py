"""What every command line of the project shares (``wiregate``, ``datafactory``): exit codes
and the SIGTERM exception, one-line usage errors. Kept apart from ``wiregate.cli``, whose
import registers every ``wiregate`` subcommand: a command of its own imports only this."""
