import sys

from scout_tui.main import entry

sys.exit(entry())
