"""Report rendering: readable tables and stable JSON."""
