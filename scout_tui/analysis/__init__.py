"""Pure analysis: functions of text and parsed code, no I/O, no git, no network.

Everything here takes what was read (a parsed module, a log, a report) and returns data;
the collectors decide what a result means for the report."""
