"""Webhooks: triggers that start runs from a signed POST, and the signature every outgoing webhook carries
(docs/background.md)."""
