"""mixrank.inference stage."""
