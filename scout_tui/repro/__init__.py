"""Running a repro: a command in a process group of its own, its output streamed, and
stopped as a whole."""
