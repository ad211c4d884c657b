"""The Environments Hub: install, inspect and publish verifiers environments through `prime env`."""
