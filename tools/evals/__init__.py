"""Evals: run a smoke eval on the installed stack, summarize its rewards, show its samples."""
