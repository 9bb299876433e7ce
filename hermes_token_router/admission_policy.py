"""The host's admission policy as it arrives: two trusted channels, parsed strictly.

A policy names *protected* toolsets and *pinned* tool names. It is read from exactly two
places (a hook keyword and an agent attribute), never normalised, and anything that does
not parse exactly -- or two channels that disagree -- is an *invalid* policy, which makes
the router change nothing. Also here: Hermes's worker identity as the policy sees it, and
the ordered owner snapshot an envelope is bound against. Pure: no Hermes imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union


# The two trusted channels (nothing else is ever read as admission metadata).
HOOK_KEYWORD = "hermes_token_router_admission"
AGENT_ATTRIBUTE = "_hermes_token_router_admission"
SCHEMA_VERSION = 1
_KEYS = frozenset({"schema_version", "protected_toolsets", "pinned_tool_names"})

# Admission status.
EMPTY = "empty"
VALID = "valid"
INVALID = "invalid"

# Worker identity.
WORKER = "worker"
NOT_WORKER = "not_worker"
UNCERTAIN = "uncertain"
DEFAULT_WORKER_TOOLSET = "kanban"


class _Missing:
    """The channel was not provided at all (distinct from an explicit ``None``)."""

    _instance: Optional["_Missing"] = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


# -- parsing -------------------------------------------------------------------------
@dataclass(frozen=True)
class Admission:
    status: str
    protected_toolsets: Tuple[str, ...] = ()
    pinned_tool_names: Tuple[str, ...] = ()
    error: str = ""

    @property
    def is_valid(self) -> bool:
        return self.status != INVALID


EMPTY_ADMISSION = Admission(EMPTY)


def invalid_admission(error: str) -> Admission:
    return Admission(INVALID, (), (), error)


def _identifiers(value: Any, key: str) -> Union[Tuple[str, ...], str]:
    """An exact tuple of identifiers, or an error string. Never normalises."""
    if type(value) not in (list, tuple):
        return f"{key} must be a list of strings, got {type(value).__name__}"
    out: List[str] = []
    seen = set()
    for item in tuple(value):  # snapshot before looking at the items
        if type(item) is not str:  # no bool, no None, no str subclasses
            return f"{key} contains a non-string identifier ({type(item).__name__})"
        if not item:
            return f"{key} contains an empty identifier"
        if item != item.strip():
            return f"{key} contains a whitespace-padded identifier {item!r}"
        if item in seen:
            return f"{key} contains a duplicate identifier {item!r}"
        seen.add(item)
        out.append(item)
    return tuple(out)


def _parse_one(value: Any, channel: str) -> Admission:
    if value is None:
        return invalid_admission(f"{channel}: explicit None is not a policy")
    if type(value) is not dict:
        return invalid_admission(f"{channel}: expected a mapping, got {type(value).__name__}")
    snapshot = dict(value)  # one read of the untouched input
    keys = set(snapshot)
    if any(type(k) is not str for k in keys):
        return invalid_admission(f"{channel}: non-string key")
    unknown = sorted(keys - _KEYS)
    if unknown:
        return invalid_admission(f"{channel}: unknown key(s) {', '.join(unknown)}")
    missing = sorted(_KEYS - keys)
    if missing:
        return invalid_admission(f"{channel}: missing key(s) {', '.join(missing)}")
    version = snapshot["schema_version"]
    if type(version) is not int or version != SCHEMA_VERSION:
        return invalid_admission(f"{channel}: schema_version must be the integer {SCHEMA_VERSION}, got {version!r}")
    protected = _identifiers(snapshot["protected_toolsets"], "protected_toolsets")
    if isinstance(protected, str):
        return invalid_admission(f"{channel}: {protected}")
    pins = _identifiers(snapshot["pinned_tool_names"], "pinned_tool_names")
    if isinstance(pins, str):
        return invalid_admission(f"{channel}: {pins}")
    return Admission(VALID, protected, pins, "")


def parse_admission(hook_value: Any = MISSING, agent_value: Any = MISSING) -> Admission:
    """Parse the two trusted channels into one ``Admission``.

    Missing on both channels is the valid empty policy. One present channel is parsed on
    its own. Two present channels must parse to exactly the same policy (same identifiers,
    same order); anything else is invalid.
    """
    hook_missing = hook_value is MISSING
    agent_missing = agent_value is MISSING
    if hook_missing and agent_missing:
        return EMPTY_ADMISSION
    parsed = []
    if not hook_missing:
        parsed.append(_parse_one(hook_value, "hook keyword " + HOOK_KEYWORD))
    if not agent_missing:
        parsed.append(_parse_one(agent_value, "agent attribute " + AGENT_ATTRIBUTE))
    for p in parsed:
        if not p.is_valid:
            return p
    if len(parsed) == 2 and (parsed[0].protected_toolsets != parsed[1].protected_toolsets
                             or parsed[0].pinned_tool_names != parsed[1].pinned_tool_names):
        return invalid_admission("the hook keyword and the agent attribute disagree")
    return parsed[0]


def read_channels(hook_kwargs: Optional[Mapping[str, Any]], agent: Any) -> Tuple[Any, Any]:
    """(hook value, agent value) exactly as provided, ``MISSING`` where absent.

    An agent attribute that cannot be read is reported as an invalid (non-mapping) value,
    never as missing: an unreadable policy must not become the empty policy.
    """
    hook_value = MISSING
    if hook_kwargs is not None and HOOK_KEYWORD in hook_kwargs:
        hook_value = hook_kwargs[HOOK_KEYWORD]
    agent_value = MISSING
    if agent is not None:
        try:
            agent_value = getattr(agent, AGENT_ATTRIBUTE, MISSING)
        except Exception as exc:  # a property that raises
            agent_value = _Unreadable(type(exc).__name__)
    return hook_value, agent_value


@dataclass(frozen=True)
class _Unreadable:
    error: str


# -- worker identity and owner snapshot ------------------------------------------------
def worker_status(task_env: Optional[str], dispatcher_reports: Optional[bool], *, direct: bool) -> str:
    """Evaluate worker identity once per agent and session.

    ``task_env``: the raw ``HERMES_KANBAN_TASK`` value (None when unset).
    ``dispatcher_reports``: Hermes's own answer to "is this a dispatcher-owned worker"
    (None when the predicate could not be evaluated).
    ``direct``: the agent is the top-level agent of its process (not a delegated child,
    specialist, background fork, curator or cron run).
    """
    if task_env is None or task_env == "":
        return NOT_WORKER
    if not direct:
        return NOT_WORKER  # an inherited environment confers no worker authority
    if type(task_env) is not str or not task_env.strip():
        return UNCERTAIN  # set but blank: Hermes's own checks disagree on this
    if dispatcher_reports is None:
        return UNCERTAIN
    return WORKER if dispatcher_reports is True else NOT_WORKER


OwnerSnapshot = Tuple[Tuple[str, Optional[str]], ...]


def snapshot_owners(names: Sequence[str], owner_of: Callable[[str], Optional[str]]) -> Optional[OwnerSnapshot]:
    """An immutable, ordered (name, owner) snapshot; ``None`` when any look-up is uncertain
    (an exception, a non-string answer, a non-string or duplicate name)."""
    out: List[Tuple[str, Optional[str]]] = []
    seen = set()
    try:
        for name in tuple(names):
            if type(name) is not str or not name or name in seen:
                return None
            seen.add(name)
            owner = owner_of(name)
            if owner is not None and type(owner) is not str:
                return None
            out.append((name, owner))
    except Exception:
        return None
    return tuple(out)


def as_snapshot(owners: Any, names: Tuple[str, ...]) -> Optional[OwnerSnapshot]:
    if owners is None:
        return None
    if isinstance(owners, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in owners):
        snap = owners
    elif isinstance(owners, Mapping):
        try:
            if any(n not in owners for n in names):
                return None
            snap = tuple((n, owners[n]) for n in names)
        except Exception:
            return None
    elif callable(owners):
        return snapshot_owners(names, owners)
    else:
        return None
    if tuple(n for n, _ in snap) != names:
        return None
    if any(o is not None and type(o) is not str for _, o in snap):
        return None
    return snap
