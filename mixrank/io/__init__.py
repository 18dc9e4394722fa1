"""mixrank.io stage."""
