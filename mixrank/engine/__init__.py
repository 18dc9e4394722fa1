"""mixrank.engine stage."""
