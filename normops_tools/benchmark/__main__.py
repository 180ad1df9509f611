"""``python -m normops_tools.benchmark`` = ``python -m normops bench``."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
