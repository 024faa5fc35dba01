"""Known cases for the IAM evaluator of tests/clouds/iam_policy.py, from AWS's documented semantics."""

from __future__ import annotations

from typing import Any

import pytest

from tests.clouds.iam_policy import Request, allowed

SECRET = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:tenancy/acme/dev/db/orders-AbCdEf"
READ_DEV = {
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["secretsmanager:GetSecretValue"],
            "Resource": "arn:aws:secretsmanager:eu-west-1:*:secret:tenancy/acme/dev/*",
        }
    ]
}


def test_allow_needs_action_and_resource() -> None:
    assert allowed([READ_DEV], Request("secretsmanager:GetSecretValue", SECRET))
    assert not allowed([READ_DEV], Request("secretsmanager:PutSecretValue", SECRET))
    assert not allowed([READ_DEV], Request("secretsmanager:GetSecretValue", SECRET.replace("/dev/", "/prod/")))
    # The `/` ends the name: acme's pattern never reaches acme-eu.
    assert not allowed([READ_DEV], Request("secretsmanager:GetSecretValue", SECRET.replace("acme/", "acme-eu/")))


def test_actions_are_case_insensitive_resources_are_not() -> None:
    assert allowed([READ_DEV], Request("SecretsManager:getsecretvalue", SECRET))
    assert not allowed([READ_DEV], Request("secretsmanager:GetSecretValue", SECRET.replace("acme", "ACME")))


def test_wildcards_star_and_question_mark() -> None:
    policy = {"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "arn:aws:kms:*:*:key/k?"}]}
    assert allowed([policy], Request("kms:Decrypt", "arn:aws:kms:eu-west-1:1:key/k1"))
    assert not allowed([policy], Request("kms:Decrypt", "arn:aws:kms:eu-west-1:1:key/k12"))


def test_explicit_deny_wins_and_nothing_means_deny() -> None:
    deny = {"Statement": [{"Effect": "Deny", "NotAction": "secretsmanager:DescribeSecret", "Resource": "*"}]}
    assert not allowed([READ_DEV, deny], Request("secretsmanager:GetSecretValue", SECRET))
    assert not allowed([], Request("secretsmanager:GetSecretValue", SECRET))


def _trust(condition: dict[str, Any]) -> dict[str, Any]:
    return {
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole"],
                "Condition": condition,
            }
        ]
    }


def test_conditions_and_of_keys_or_of_values_missing_key_fails() -> None:
    trust = _trust({"StringEquals": {"aws:RequestTag/ns": ["a", "b"], "aws:RequestTag/sa": "workload"}})
    service = ("Service", "pods.eks.amazonaws.com")

    def ask(context: dict[str, str], principal: tuple[str, str] = service) -> bool:
        return allowed([trust], Request("sts:AssumeRole", "arn:aws:iam::1:role/r", principal, context))

    assert ask({"aws:RequestTag/ns": "b", "AWS:requesttag/SA": "workload"})
    assert not ask({"aws:RequestTag/ns": "c", "aws:RequestTag/sa": "workload"})
    assert not ask({"aws:RequestTag/ns": "a"})
    assert not ask({"aws:RequestTag/ns": "a", "aws:RequestTag/sa": "workload"}, ("AWS", "arn:aws:iam::1:role/x"))


def test_string_like_and_negations() -> None:
    like = _trust({"StringLike": {"k": "tenant-*-dev"}})
    not_equals = _trust({"StringNotEquals": {"k": "x"}})
    service = ("Service", "pods.eks.amazonaws.com")
    assert allowed([like], Request("sts:AssumeRole", None, service, {"k": "tenant-acme-dev"}))
    assert not allowed([like], Request("sts:AssumeRole", None, service, {"k": "tenant-acme-prod"}))
    assert allowed([not_equals], Request("sts:AssumeRole", None, service, {}))
    assert not allowed([not_equals], Request("sts:AssumeRole", None, service, {"k": "x"}))


def test_what_it_does_not_model_fails_loudly() -> None:
    numeric = _trust({"NumericLessThan": {"k": "1"}})
    with pytest.raises(NotImplementedError):
        allowed([numeric], Request("sts:AssumeRole", None, ("Service", "pods.eks.amazonaws.com"), {"k": "0"}))
    with pytest.raises(NotImplementedError):
        allowed([{"Statement": [{**READ_DEV["Statement"][0], "NotPrincipal": "*"}]}], Request("s3:Get", "x"))
