"""The console (Textual): the app, its screens and widgets, over a `session`."""
