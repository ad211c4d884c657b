"""Diagnosis of training runs: readers, canonical series, signatures, comparison."""
