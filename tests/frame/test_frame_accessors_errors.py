"""A frame accessor asked for a term the formula lacks says so with a mixrank error."""

import pytest

import mixrank


def test_level_counts_of_an_unknown_term_is_a_data_error():
    fr = mixrank.build_frame(mixrank.load_example(), "correct ~ model + (1|subject)")
    with pytest.raises(mixrank.DataError, match=r"'prompt' is not a random term.*\['subject'\]"):
        fr.level_counts("prompt")
