"""Redact obvious secrets from what is sent to the fast model (spec S-8).

Tool inputs and outputs go to the fast model's provider, which may not be the provider of the
main model. Before they leave the machine, :func:`redact_secrets` replaces what is plainly a
credential with ``[REDACTED]``: provider API keys (OpenAI, Anthropic, Google, GitHub, AWS, Slack,
Stripe, Hugging Face), bearer and basic authorization values, JSON Web Tokens, private key blocks,
passwords in URLs and ``PASSWORD=…``-style assignments. :func:`redact_value` does the same to every
string of a JSON-like value and blanks the values of keys named like a secret (``password``,
``api_key``, ``token``…).

This is a safety net, not a guarantee: a secret with no recognisable shape still gets through.

>>> redact_secrets("curl -H 'Authorization: Bearer abcdef0123456789abcdef' https://x")
"curl -H 'Authorization: Bearer [REDACTED]' https://x"
>>> redact_secrets("postgres://app:hunter2@db:5432/prod")
'postgres://app:[REDACTED]@db:5432/prod'
>>> redact_value({"user": "ana", "password": "hunter2"})
{'user': 'ana', 'password': '[REDACTED]'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

__all__ = ["REDACTED", "redact_secrets", "redact_value"]

REDACTED = "[REDACTED]"

# Each pattern's group "secret" (or the whole match, when it has none) is replaced. They are
# compiled on the first redaction, not by every program that imports the summaries (issue 19).
_SOURCES: tuple[tuple[str, int], ...] = (
    # Private key blocks; a block cut off by truncation is redacted to the end of the text.
    (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
        re.DOTALL,
    ),
    # Anthropic (sk-ant-…), OpenAI (sk-…, sk-proj-…, sk-svcacct-…), DashScope-style sk- keys.
    (r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}", 0),
    # Stripe secret and restricted keys.
    (r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", 0),
    # Google API keys and OAuth access tokens.
    (r"\bAIza[0-9A-Za-z_-]{35}", 0),
    (r"\bya29\.[0-9A-Za-z_-]{20,}", 0),
    # GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained.
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}", 0),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,}", 0),
    # GitLab personal access tokens.
    (r"\bglpat-[A-Za-z0-9_-]{20,}", 0),
    # AWS access key ids, and secret access keys where they are named.
    (r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", 0),
    (
        r"(?i)\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})",
        0,
    ),
    # Slack tokens and incoming-webhook URLs.
    (r"\bxox[abposr]-[0-9A-Za-z-]{10,}", 0),
    (r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+", 0),
    # Hugging Face tokens.
    (r"\bhf_[A-Za-z0-9]{30,}", 0),
    # JSON Web Tokens (header.payload.signature, both JSON parts base64url of "{").
    (r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0),
    # Authorization values: bearer tokens and basic credentials.
    (r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})", 0),
    (
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})",
        0,
    ),
    # Passwords in URLs: scheme://user:password@host.
    (r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<secret>[^\s@/]+)@", 0),
    # NAME=value / "name": "value" assignments whose name says it is a secret.
    (
        r"(?i)\b[A-Za-z0-9_.-]*(?:password|passwd|secret|api[_-]?key|access[_-]?token"
        r"|auth[_-]?token|refresh[_-]?token|private[_-]?key|client[_-]?secret)"
        r"[\"']?\s*[:=]\s*[\"']?(?P<secret>[^\s\"'`,;&]{4,})",
        0,
    ),
)


@cache
def _patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern, flags) for pattern, flags in _SOURCES)


# Mapping keys whose string values are secrets whatever they look like.
_SECRET_KEY = re.compile(
    r"(?i)(?:^|[_.-])(?:password|passwd|secret|token|api[_-]?key|apikey|authorization"
    r"|private[_-]?key|client[_-]?secret|credentials?)$"
)


def _replace(match: re.Match[str]) -> str:
    if "secret" in match.re.groupindex and match.group("secret") is not None:
        start, end = match.span("secret")
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + REDACTED + text[end - whole_start :]
    return REDACTED


def redact_secrets(text: str) -> str:
    """``text`` with every recognisable secret replaced by ``[REDACTED]``.

    >>> redact_secrets("key sk-ant-api03-abcdefghijklmnopqrstuv and AKIAABCDEFGHIJKLMNOP")
    'key [REDACTED] and [REDACTED]'
    >>> redact_secrets("nothing to see here")
    'nothing to see here'
    """
    if not text:
        return text
    for pattern in _patterns():
        text = pattern.sub(_replace, text)
    return text


def redact_value(value: Any, *, _depth: int = 0) -> Any:
    """A copy of a JSON-like value with secrets redacted from every string.

    Strings are passed through :func:`redact_secrets`; the string value of a key named like a
    secret (``password``, ``api_key``, ``Authorization``, ``GITHUB_TOKEN``…) is replaced whole.
    Other values are returned as they are (never modified in place).
    """
    if isinstance(value, str):
        return redact_secrets(value)
    if _depth > 100:  # deeper than any real tool input; serialization will refuse it anyway
        return value
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and item and _SECRET_KEY.search(key):
                out[key] = REDACTED
            else:
                out[key] = redact_value(item, _depth=_depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_value(item, _depth=_depth + 1) for item in value]
    return value
