"""The CEL helpers that read values as the API server parses them (components/admission/base.py),
checked against a parser made for the job on many spellings: the Kubernetes Python client's
`parse_quantity` (kubernetes.utils.quantity) for quantities, and for int-or-percent values the
reading of k8s.io/apimachinery intstr.GetScaledValueFromIntOrPercent (strconv.Atoi of the digits
before `%`), on the strings the API server's IsValidPercent (`^[0-9]+%$`) lets through."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from kubernetes.utils.quantity import parse_quantity

from components.admission.base import int_or_percent_number, quantity_is_zero
from tests.cel_admission import CelEngine


def _parsed(text: str) -> Decimal:
    """The kubernetes client's quantity parser (untyped upstream)."""
    value: Decimal = parse_quantity(text)  # type: ignore[no-untyped-call]
    return value


ENGINE = CelEngine()
QUANTITIES = [
    "0", "00", "0.0", ".0", "0.", "+0", "-0", "0e0", "0e3", "0E9", "0e-3", "0m", "0n", "0u", "0k", "0M",
    "0G", "0T", "0P", "0E", "0Ki", "0Mi", "0Gi", "0Ti", "0Pi", "0Ei", "0.000Ki", "000000000000.000000",
    "1", "01", "1m", "1n", "1000m", "0.001", "0.001Ki", "1e3", "1E6", "1e-3", "+1Gi", "0.5Gi", "256Mi",
    "10", "100m", "0.1", ".5", "5.", "9e0", "0.0000001",
]  # fmt: skip


def _evaluate(expression: str, value: Any) -> Any:
    ok, result = ENGINE.evaluate(expression, {"object": {"v": value}})
    assert ok, result
    return result


@pytest.mark.parametrize("text", QUANTITIES)
def test_a_quantity_is_zero_exactly_when_the_parser_says_so(text: str) -> None:
    assert _evaluate(quantity_is_zero("object.v"), text) == (_parsed(text) == Decimal(0)), text


PERCENTS = ["0%", "00%", "000000%", "1%", "01%", "25%", "0025%", "100%", "0100%", "000100%", "99%", "099%"]
NOT_PERCENTS = ["+0%", "0.0%", "1e2%", "-1%", " 1%", "1 %", "%", "0", "100", "1%%", "9999999999999999999%"]


@pytest.mark.parametrize("text", PERCENTS)
def test_a_percentage_reads_as_its_number(text: str) -> None:
    assert re.fullmatch(r"[0-9]+%", text)
    assert _evaluate(int_or_percent_number("object.v"), text) == int(text[:-1])


@pytest.mark.parametrize("text", NOT_PERCENTS)
def test_what_the_api_server_refuses_reads_as_minus_one(text: str) -> None:
    """Never a number the rule could take for "allows disruption"; an int stays itself."""
    assert _evaluate(int_or_percent_number("object.v"), text) == -1


@pytest.mark.parametrize("number", [0, 1, 3, 100])
def test_an_int_reads_as_itself(number: int) -> None:
    assert _evaluate(int_or_percent_number("object.v"), number) == number
