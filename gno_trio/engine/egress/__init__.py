"""Collection egress policy: the one home of the policy order, the decision
rules, read-only explanations and the confirmed policy change.
"""
