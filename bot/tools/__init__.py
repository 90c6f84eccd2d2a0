"""Tools: one fisk command each, selection rules, and the catalog over several applications."""
