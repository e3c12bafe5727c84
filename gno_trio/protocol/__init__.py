"""The MCP protocol core, sans-IO: framing, eras, envelopes, negotiation, error values.

Nothing in this package performs I/O or imports trio, so every rule here is tested
with plain function calls (a test asserts trio stays unimported).
"""
