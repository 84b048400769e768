"""Advice: the moves of a position ranked by expected final score (`moves`), and the
`Advisor` the web layer and the command line use (`advisor`). Builds on `tables`."""
