"""mixrank.formula stage."""
