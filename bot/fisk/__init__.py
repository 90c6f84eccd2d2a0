"""The fisk introspection model, running ``--fisk-introspect``, JSON schema and JSON-to-argv.

This package is the bottom of the dependency table in DESIGN.md: it knows nothing of tools selection,
Redis, Slack or Anthropic.
"""
