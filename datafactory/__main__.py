"""``python -m datafactory``."""

from datafactory.cli import main

if __name__ == "__main__":
    main(prog_name="datafactory")
