"""Fakes at the process boundary only: real servers that real clients talk to over loopback."""
