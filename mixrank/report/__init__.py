"""mixrank.report stage."""
