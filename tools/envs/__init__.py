"""Environments: check them before spending a model, install them, publish them to the Hub."""
