"""Opt-in local retrieval traces: recording, retention, labels and exports."""
