"""One wording of a p-value (`store.vocab.pvalues`) for the report, the site and the
dashboard: an underflowed 0.0 is '< 1e-300', never '0.00'."""

from __future__ import annotations

from store.vocab.pvalues import p_is, p_text


def test_a_p_value_is_two_significant_digits_and_an_underflow_says_so():
    assert p_text(0.0) == "< 1e-300"
    assert p_text(0.04937) == "0.049" and p_text(0.5) == "0.5" and p_text(1.0) == "1"
    assert p_text(0.00012) == "0.00012" and p_text(3.24e-12) == "3.2e-12"
    assert p_is(0.0, "Friedman P") == "Friedman P < 1e-300" and p_is(0.0312) == "p = 0.031"
