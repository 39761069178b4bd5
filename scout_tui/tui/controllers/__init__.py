"""The console's work off the event loop: recording decisions, running a repro, editing in
$EDITOR, collecting, checking GitHub, publishing. A controller holds no widget: it calls
the session and posts what happened (`tui.messages`) for the screen to show."""
