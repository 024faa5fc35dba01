"""Kubernetes resource quantities ("500m", "2", "512Mi", "1e3") parsed the way the API server does.

Why not a library: the runtime set carries no Kubernetes client (issue 16), and no lean package
parses quantities as the API server does. lightkube's parser, the only lean candidate, refuses `n`,
`u` and `E` exponents, accepts `Z`/`Y` suffixes and `1e3k`, and rounds to milli; the full client's
accepts spaces, `1_000`, `NaN` and `1e3k` and does not round. This module follows
k8s.io/apimachinery `resource.ParseQuantity` and its documented format:

    <quantity>        ::= <signedNumber><suffix>
    <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <signedNumber>    ::= <number> | <sign><number>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>

narrowed as ParseQuantity narrows it (an exponent is a whole number: "1e1.5" is refused), with
ParseQuantity's values: rounded away from zero to a whole number of nano ("0.9n" is 1n) and a
binary-suffixed magnitude capped at 2^63-1 ("8Ei"). Refused on purpose although ParseQuantity's
scanner reads them as zero: strings without a digit ("k", "Gi", ".", "-"); in a file people write
those are typos, not zeros. Exponents past the API server's 32-bit arithmetic (where it wraps
around) are refused too. tests/model/test_quantity.py checks all of it against apimachinery's
own test table and, over generated quantities, against the Kubernetes client's parser.
"""

from __future__ import annotations

import re
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, ROUND_UP, Context, Decimal

_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_NUMBER = r"(?P<number>[+-]?(?:[0-9]+(?:\.(?P<fraction>[0-9]*))?|\.(?P<only_fraction>[0-9]+)))"
_SUFFIX = r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
_QUANTITY = re.compile(_NUMBER + _SUFFIX, re.ASCII)
_LEADING_NUMBER = re.compile(_NUMBER, re.ASCII)
_INT32 = range(-(2**31), 2**31)
_INT64_MAX = Decimal(2**63 - 1)
_NANO = Decimal("1e-9")
# Exact arithmetic: every operation below is exact at this precision (no silent rounding).
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
SUFFIXES = "Ki Mi Gi Ti Pi Ei (powers of 1024), n u m k M G T P E (powers of 1000), or an exponent such as e3"


def _refused(text: str, reason: str = "") -> ValueError:
    return ValueError(f"{text!r} is not a Kubernetes quantity{': ' + reason if reason else ''}")


def _why_not(text: str) -> str:
    """The reason a person can act on, where there is a specific one."""
    if text != text.strip():
        return "it has leading or trailing spaces"
    number = _LEADING_NUMBER.match(text)
    rest = text[number.end() :] if number is not None else ""
    if rest[:1] in ("e", "E") and rest[1:2] in ("+", "-", *"0123456789"):
        return f"the exponent {rest!r} must be a whole number and end the quantity (as in 1e3 or 5E-2)"
    if rest:
        return f"unknown suffix {rest!r}; the suffixes are {SUFFIXES}"
    return ""


def _exponent(match: re.Match[str]) -> int:
    if match["exponent"] is None:
        return _DECIMAL_SI[match["decimal"]]
    digits = match["exponent"].lstrip("+-").lstrip("0")
    # More than ten digits is out of range anyway (and int() refuses thousands of them).
    exponent = int(match["exponent"]) if len(digits) <= 10 else 2**31
    fraction_digits = len(match["fraction"] or match["only_fraction"] or "")
    if exponent not in _INT32 or fraction_digits - exponent not in _INT32:
        raise _refused(match.string, "the exponent is beyond the API server's 32-bit arithmetic")
    return exponent


def parse_quantity(text: str) -> Decimal:
    """The value the API server gives `text`; ValueError naming the problem if it refuses it."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise _refused(text, _why_not(text))
    number = Decimal(match["number"])
    if match["binary"] is not None:
        value = _EXACT.multiply(number, Decimal(2 ** _BINARY_SI[match["binary"]]))
    else:
        value = number.scaleb(_exponent(match), context=_EXACT)
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -9:  # finer than nano: round as the API server does
        value = value.quantize(_NANO, rounding=ROUND_UP, context=_EXACT)
    if match["binary"] is not None and abs(value) > _INT64_MAX:
        value = _INT64_MAX.copy_sign(value)
    return value if value else Decimal(0)
