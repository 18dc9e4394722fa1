"""mixrank.results stage."""
