"""The classifier's prompt and the strict reading of its answer.

Why strict: a routing answer that needs interpretation is an uncertain answer, and
uncertain means the full tool surface. So every deviation -- prose around the JSON, a
toolset the agent does not have, a confidence that is missing or not in [0, 1], an answer
that only exists in ``reasoning_content`` -- is refused with its own reason, so the debug
log says which model habit to fix instead of a generic "parse error".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

MAX_TEXT_CHARS = 4000
MAX_DESCRIPTION_CHARS = 200
# A valid answer is well under 1 KB (max_tokens is 256); anything past this is refused
# unread, so a hostile or broken server cannot make the user's thread parse megabytes.
MAX_REPLY_CHARS = 64 * 1024
# How many candidate ``{...}`` spans the prose check decodes: bounded work whatever the reply.
_MAX_SPANS = 8

SYSTEM_PROMPT = """You pick which toolsets an AI agent needs for the user's request.
Reply with exactly one JSON object and nothing else: no prose, no code fences, no reasoning.
Shape: {{"toolsets": ["<name>", ...], "intent": "<3-8 word summary>", "confidence": <number 0.0-1.0>}}
Use only names from this list. Include every toolset the request plausibly needs.
If you are not sure, still answer in that shape with a low confidence.
Toolsets:
{toolsets}"""


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def build_messages(text: str, toolsets: Sequence[Tuple[str, str]]) -> List[Dict[str, str]]:
    """System prompt with the live toolset list; the user's text goes in its own message
    so it is data, not instructions, and is clipped so the request stays short."""
    listing = "\n".join(f"- {name}: {_one_line(desc, MAX_DESCRIPTION_CHARS)}" if desc else f"- {name}"
                        for name, desc in toolsets)
    user = text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS]
    return [{"role": "system", "content": SYSTEM_PROMPT.format(toolsets=listing)},
            {"role": "user", "content": user}]


@dataclass(frozen=True)
class Answer:
    """Either a usable answer (``reason`` is None) or the reason it was refused."""
    reason: Optional[str]
    toolsets: Tuple[str, ...] = ()
    intent: str = "unknown"
    confidence: float = 0.0
    detail: str = ""


def _refuse(reason: str, detail: str = "", intent: str = "unknown", confidence: float = 0.0) -> Answer:
    return Answer(reason=reason, intent=intent, confidence=confidence, detail=detail)


def read_envelope(status_body: bytes) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(content, reasoning, finish_reason) of a chat completion; ``ValueError`` when the
    HTTP body is not a chat completion at all."""
    data = json.loads(status_body)
    if not isinstance(data, dict):
        raise ValueError("body is not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ValueError("no message")
    content = message.get("content")
    # vLLM / llama.cpp / DeepSeek say reasoning_content; OpenRouter says reasoning.
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if content is not None and not isinstance(content, str):
        raise ValueError("content is not a string")
    finish = choices[0].get("finish_reason")
    return content, reasoning if isinstance(reasoning, str) else None, finish if isinstance(finish, str) else None


def _no_constants(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def _balanced_spans(text: str):
    """``(start, end)`` of each balanced ``{...}`` in ``text``, innermost first, in one
    pass (strings inside braces are skipped, so a ``}`` in a string does not close)."""
    stack: List[int] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and stack:
            in_string = True
        elif ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            yield stack.pop(), i + 1


def _embedded_object(text: str) -> bool:
    """True when some JSON object sits inside ``text`` (i.e. the answer was prose around JSON).

    Linear: one scan for balanced spans, then at most ``_MAX_SPANS`` decodes of a span's
    own slice (decoding from every ``{`` of the whole text was quadratic: each failure
    recounts the lines before it)."""
    for tried, (start, end) in enumerate(_balanced_spans(text)):
        if tried >= _MAX_SPANS:
            return False
        try:
            if isinstance(json.loads(text[start:end], parse_constant=_no_constants), dict):
                return True
        except (ValueError, RecursionError):
            continue
    return False


def parse_answer(content: Optional[str], reasoning: Optional[str], finish_reason: Optional[str],
                 known: Sequence[str], threshold: float) -> Answer:
    """Judge one answer against the contract; the first failed check names the reason."""
    if content is not None and len(content) > MAX_REPLY_CHARS:
        return _refuse("classifier:reply_too_large", f"{len(content)} chars > {MAX_REPLY_CHARS}")
    body = (content or "").strip().lstrip("\ufeff")
    if not body:
        if reasoning and reasoning.strip():
            return _refuse("classifier:reasoning_only", "content empty, answer only in reasoning_content")
        return _refuse("classifier:empty_content")
    try:
        obj = json.loads(body, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        if _embedded_object(body):
            return _refuse("classifier:prose_around_json", f"{len(body)} chars with a JSON object inside")
        if finish_reason == "length":
            return _refuse("classifier:truncated", "finish_reason=length before the JSON closed")
        return _refuse("classifier:non_json", f"{len(body)} chars, no JSON object")
    if not isinstance(obj, dict):
        return _refuse("classifier:not_object", f"top level is {type(obj).__name__}")

    if "confidence" not in obj or obj["confidence"] is None:
        return _refuse("classifier:confidence_missing")
    conf = obj["confidence"]
    if isinstance(conf, bool) or not isinstance(conf, (int, float)):
        return _refuse("classifier:confidence_not_number", f"type {type(conf).__name__}")
    conf = float(conf)
    if not 0.0 <= conf <= 1.0:
        return _refuse("classifier:confidence_out_of_range", f"{conf!r}")

    names = obj.get("toolsets")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return _refuse("classifier:toolsets_invalid", "toolsets is not a list of strings", confidence=conf)
    if not names:
        # "No tools" from a router is indistinguishable from "did not choose": keep them all.
        return _refuse("classifier:empty_toolsets", confidence=conf)
    known_set = set(known)
    for name in names:
        if name not in known_set:
            return _refuse("classifier:unknown_toolset", confidence=conf)

    summary = obj.get("intent")
    if not isinstance(summary, str) or not summary.strip():
        return _refuse("classifier:intent_missing", confidence=conf)
    # The model's summary paraphrases the user's request, so it is checked and dropped: the
    # intent that reaches the debug log and the ledger is the set of (known) toolsets.
    intent = "+".join(dict.fromkeys(names))

    if conf < threshold:
        return _refuse("classifier:below_threshold", f"{conf:.3f} < {threshold:.3f}", intent=intent, confidence=conf)
    return Answer(reason=None, toolsets=tuple(dict.fromkeys(names)), intent=intent, confidence=conf)
