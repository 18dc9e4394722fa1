"""mixrank.design stage."""
