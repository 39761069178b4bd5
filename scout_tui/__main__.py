import sys

from scout_tui.cli import entry

sys.exit(entry())
