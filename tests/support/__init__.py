"""Helpers every test layer shares."""
