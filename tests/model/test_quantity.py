"""The runtime quantity parser (components/model/core/quantity.py) against two references.

1. k8s.io/apimachinery's own expectations for `resource.ParseQuantity` (its TestQuantityParse
   table: the values the API server gives, with its rounding to nano and its 2^63-1 cap on binary
   suffixes, and the strings it refuses), restated here as values.
2. The Kubernetes Python client's `parse_quantity` as an oracle (the client is in the `ops` and
   `dev` groups only) over every suffix, exponent, fraction and sign, a seeded random sample, and
   strings both refuse. The client does not round to nano nor cap binary magnitudes, so its value
   goes through those two documented rules before comparing; where it accepts what the API server
   refuses (spaces, `1_000`, `NaN`, `1K`, `1e3k`), the runtime parser sides with the API server and
   the test names each such string.
"""

from __future__ import annotations

import random
import re
from decimal import ROUND_UP, Context, Decimal, localcontext

import pytest
from kubernetes.utils import parse_quantity as client_parse_quantity
from pydantic import ValidationError

from components.model.core.fields import ComputeAmounts, quantity_value
from components.model.core.quantity import parse_quantity

INT64_MAX = 2**63 - 1
BINARY = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
DECIMAL = ["n", "u", "m", "", "k", "M", "G", "T", "P", "E"]
EXPONENTS = ["e0", "e3", "E3", "e-3", "E-9", "e+2", "E+6", "e18", "E-1", "e007", "e-12", "E21"]
NUMBERS = ["0", "1", "7", "12", "007", "100", "1.5", "0.5", ".5", "5.", "0.001", "1.025", "123456789", "0.000001"]
SIGNS = ["", "+", "-"]

# (input, the value apimachinery's TestQuantityParse expects), every one also tried with + and -.
APIMACHINERY_VALUES: list[tuple[str, Decimal | int]] = [
    ("0", 0), ("0n", 0), ("0u", 0), ("0m", 0), ("0Ki", 0), ("0k", 0), ("0Mi", 0), ("0Ti", 0),
    ("1", 1), ("1Ki", 1024), ("8Ki", 8 * 1024), ("7Mi", 7 * 2**20), ("6Gi", 6 * 2**30),
    ("5Ti", 5 * 2**40), ("4Pi", 4 * 2**50), ("3Ei", 3 * 2**60), ("100Ti", 100 * 2**40),
    ("5n", Decimal("5e-9")), ("4u", Decimal("4e-6")), ("3m", Decimal("0.003")), ("8k", 8000),
    ("50k", 50000), ("7M", 7 * 10**6), ("6G", 6 * 10**9), ("300T", 300 * 10**12), ("2P", 2 * 10**15),
    ("1E", 10**18), ("12E", 12 * 10**18),
    ("1E-3", Decimal("0.001")), ("1e3", 1000), ("1E6", 10**6), ("1e9", 10**9), ("1E12", 10**12),
    ("1e15", 10**15), ("1E18", 10**18), ("1e14", 10**14), ("100.035k", 100035),
    ("0.001", Decimal("0.001")), ("0.0005k", Decimal("0.5")), ("0.00050k", Decimal("0.5")),
    ("0.5e0", Decimal("0.5")), ("0.5e-1", Decimal("0.05")), ("0.5e-2", Decimal("0.005")),
    ("10.035M", 10035000), ("1.2e3", 1200), ("1.3E+6", 1300000), ("1.40e9", 1400000000),
    ("1.53E12", 1530000000000), ("1.7E18", 1700000000000000000), ("9.01", Decimal("9.01")),
    ("7.123456M", 7123456), ("6.987654321G", 6987654321), ("40.1T", 401 * 10**11),
    ("2.5P", 25 * 10**14), ("1.01E", 101 * 10**16),
    # Rounded away from zero to a whole nano, as the API server keeps them.
    ("3.001n", Decimal("4e-9")), ("1.1E-9", Decimal("2e-9")), ("0.0000000001", Decimal("1e-9")),
    ("0.0000000005", Decimal("1e-9")), ("0.5e-9", Decimal("1e-9")), ("0.9n", Decimal("1e-9")),
    ("0.00000012345", Decimal("124e-9")), ("0.00000012354", Decimal("124e-9")),
    # Binary suffixes are capped at 2^63-1.
    ("9Ei", INT64_MAX), ("9223372036854775807Ki", INT64_MAX),
    ("100.035Ki", Decimal("102435.84")), ("0.5Mi", 2**19), ("0.05Gi", Decimal("53687091.2")),
    ("0.025Ti", Decimal("27487790694.4")), ("0.000000000001Ki", Decimal("2e-9")),
    (".001", Decimal("0.001")), (".0001k", Decimal("0.1")), ("1.", 1), ("1.G", 10**9),
]  # fmt: skip

# What apimachinery's test refuses, and what the runtime parser refuses on purpose (module docstring).
REFUSED = ["", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 "]
REFUSED += ["k", "Gi", ".", "-", "+", "e3", "1e2147483648", "1e-2147483648", "1.5e-2147483647", "1e-" + "9" * 5000]

# Accepted by the client, refused by the API server: the client's parser is the wrong authority here.
CLIENT_ONLY = [" 1", "1 ", "\t1", "1\n", "1_000", "NaN", "Infinity", "-Infinity", "1K", "1e3k", "1E3Ki"]
CLIENT_ONLY += ["1 Gi", "\u0661", "1e2147483648", "1e-2147483649"]

# Suffixes neither parser takes (SI prefixes Kubernetes lacks, byte units, a lowercase binary `ki`).
BAD_SUFFIXES = ["Z", "Y", "Zi", "Yi", "b", "B", "KB", "KiB", "ki", "mi", "ni", "ui", "i", "ii", "e", "E+", "e-"]
BAD_SUFFIXES += ["e1.5", "x", "Kii", "kk", "mm", "%"]
# The client's departures within the random sample's alphabet: `K` for kilo, an exponent before a suffix.
CLIENT_DEPARTURE = re.compile(r".*(?:[0-9.]K|[eE][+-]?[0-9]+(?:[numkKMGTPE]|[KMGTPE]i))")


def client(text: str) -> Decimal:
    """The Kubernetes client's value, computed exactly (its arithmetic follows the decimal context)."""
    with localcontext(Context(prec=2000)):
        return Decimal(client_parse_quantity(text))  # type: ignore[no-untyped-call]


def oracle(text: str) -> Decimal:
    """The client's value under the API server's two value rules (nano rounding, the binary cap)."""
    value = client(text)
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -9:
        value = value.quantize(Decimal("1e-9"), rounding=ROUND_UP, context=Context(prec=2000))
    if text.endswith("i") and abs(value) > INT64_MAX:
        value = Decimal(INT64_MAX).copy_sign(value)
    return value


def refused_by_client(text: str) -> bool:
    try:
        client(text)
    except ValueError:
        return True
    return False


def generated() -> list[str]:
    return [sign + number + suffix for sign in SIGNS for number in NUMBERS for suffix in DECIMAL + BINARY + EXPONENTS]


@pytest.mark.parametrize("sign", SIGNS)
def test_the_values_apimachinery_expects(sign: str) -> None:
    wrong = {}
    for text, expected in APIMACHINERY_VALUES:
        value = Decimal(expected) * (-1 if sign == "-" else 1)
        if parse_quantity(sign + text) != value:
            wrong[sign + text] = (parse_quantity(sign + text), value)
    assert wrong == {}


@pytest.mark.parametrize("text", REFUSED, ids=lambda text: repr(text[:24]))
def test_what_the_api_server_refuses_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a Kubernetes quantity"):
        parse_quantity(text)


def test_every_suffix_exponent_fraction_and_sign_agrees_with_the_client() -> None:
    cases = generated()
    assert len(cases) == 3 * len(NUMBERS) * 28
    pairs = {text: (parse_quantity(text), oracle(text)) for text in cases}
    assert {text: pair for text, pair in pairs.items() if pair[0] != pair[1]} == {}
    # Most cases need neither rule, so the comparison is mostly with the client's raw value.
    raw_equal = [text for text in cases if parse_quantity(text) == client(text)]
    assert len(raw_equal) > 0.9 * len(cases)


def test_suffixes_kubernetes_lacks_are_refused_by_both() -> None:
    cases = [sign + number + suffix for sign in SIGNS for number in NUMBERS for suffix in BAD_SUFFIXES]
    cases += ["+-1", "--1", "1.2.3", "one", "0x10", "1,000", "1e3.0"]
    accepted = [text for text in cases if not refused_by_client(text)]
    assert accepted == [], "not refused by the client: not a shared refusal"
    for text in cases:
        with pytest.raises(ValueError):
            parse_quantity(text)


@pytest.mark.parametrize("text", CLIENT_ONLY)
def test_what_only_the_client_accepts_is_refused(text: str) -> None:
    assert not refused_by_client(text), "the client refuses it now: move it to the shared refusals"
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_random_strings_agree_with_the_client_except_where_it_departs_from_the_api_server() -> None:
    rng = random.Random(16)
    alphabet = "0123456789.+-eEinumkKMGTPi"
    samples = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(20000)}
    accepted = departures = 0
    for text in sorted(samples):
        try:
            value = parse_quantity(text)
        except ValueError:
            if not refused_by_client(text):
                departures += 1
                assert CLIENT_DEPARTURE.fullmatch(text), text
            continue
        accepted += 1
        assert value == oracle(text), text
    assert accepted > 500 and departures > 0


def test_quantity_value_compares_across_suffixes() -> None:
    assert quantity_value("1Gi") == quantity_value("1024Mi") == 2**30
    assert quantity_value("500m") == quantity_value("0.5") == quantity_value("5e-1")
    assert quantity_value("1G") < quantity_value("1Gi")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("four", "'four' is not a Kubernetes quantity (for example 500m, 2, 512Mi, 4Gi)"),
        ("4GB", "'4GB' is not a Kubernetes quantity: unknown suffix 'GB'; the suffixes are Ki Mi Gi Ti Pi Ei"),
        ("1ki", "unknown suffix 'ki'; the suffixes are Ki Mi Gi Ti Pi Ei (powers of 1024), n u m k M G T P E"),
        ("2e1.5", "'2e1.5' is not a Kubernetes quantity: the exponent 'e1.5' must be a whole number"),
        (" 2", "' 2' is not a Kubernetes quantity: it has leading or trailing spaces"),
        ("1e4000000000", "the exponent is beyond the API server's 32-bit arithmetic"),
        ("-1", "'-1' is negative; amounts are 0 or more"),
        ("-500m", "'-500m' is negative"),
    ],
)
def test_a_bad_quantity_says_why(value: str, words: str) -> None:
    with pytest.raises(ValidationError) as raised:
        ComputeAmounts(cpu=value)
    message = raised.value.errors()[0]["msg"]
    assert words in message and message.endswith("(for example 500m, 2, 512Mi, 4Gi)")


def test_yaml_numbers_are_quantities() -> None:
    # `cpu: 2`, `cpu: 0.5` and `memory: 1e9` arrive from YAML as numbers.
    amounts = ComputeAmounts(cpu=0.5, memory=1e9, ephemeral_storage=2)
    assert amounts.resources() == {"cpu": "0.5", "memory": "1000000000.0", "ephemeral-storage": "2"}
    assert quantity_value(amounts.memory or "") == 10**9
