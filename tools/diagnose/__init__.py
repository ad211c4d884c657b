"""Diagnosis of training runs.

readers (every source format, streamed) -> series (the crosswalk to canonical per-step series)
-> signatures (each finding's definition, threshold, causes, remedies) -> tool (`rlpilot
diagnose`, deltas in the run's dialect through configkeys) and compare (two runs side by side).
"""
