"""Ask: one answer from a closed Context Capsule, every claim checked against its passages."""
