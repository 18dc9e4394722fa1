"""mixrank.frame stage."""
