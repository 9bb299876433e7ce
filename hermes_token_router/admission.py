"""Host admission envelope: the router never broadens what the host admitted.

A host (or a plugin acting for it) may say which *protected* toolsets an agent may have and
which tools must stay visible (*pins*). The router narrows and expands surfaces, so every
expansion path (route, ``request_toolset``, pruned-call recovery, post-tool recovery,
fallback) asks this module one question -- ``admit`` -- and the planner asks another --
``floor``. The ``pre_tool_call`` guard (``guard.py``) enforces the same envelope for tools
reached by paths the router does not control (the tool_search bridge).

Pure: plain data in, frozen data out, no Hermes imports, no process-global authority.
The host adapter reads the two channels, takes the owner snapshot and evaluates the worker
predicate; this module only decides.

Vocabulary
* **Admission**: the parsed policy (``empty`` | ``valid`` | ``invalid``).
* **Envelope**: one admission bound to one agent and session together with the untouched
  capture it was evaluated against: the *ceiling* (captured protected names, captured
  order) and the *floor* (pins that must stay visible).
* **Authority**: how much the router may do for this session:
  ``captured`` (route and expand within the ceiling), ``no_authority`` (no untouched host
  provenance: keep the surface, append ordinary definitions only), ``invalid`` (invalid
  policy: change nothing), ``installed_only`` (cannot attach to the agent) and
  ``uncapturable`` (the surface could not be read): no expansion at all.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

# The two trusted channels (nothing else is ever read as admission metadata).
HOOK_KEYWORD = "hermes_token_router_admission"
AGENT_ATTRIBUTE = "_hermes_token_router_admission"
SCHEMA_VERSION = 1
_KEYS = frozenset({"schema_version", "protected_toolsets", "pinned_tool_names"})

# Reason codes (the same strings as ``recovery.py``; a test pins the equality).
READY = "READY"
ALREADY_LOADED = "ALREADY_LOADED"
NO_AUTHORITY = "NO_AUTHORITY"
NO_AUTHORITY_INVALID_POLICY = "NO_AUTHORITY_INVALID_POLICY"
DENIED_PROTECTED = "DENIED_PROTECTED"

# Admission status.
EMPTY = "empty"
VALID = "valid"
INVALID = "invalid"

# Envelope authority.
CAPTURED = "captured"
NO_AUTHORITY_MODE = "no_authority"
INVALID_MODE = "invalid"
INSTALLED_ONLY = "installed_only"
UNCAPTURABLE = "uncapturable"

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


def _invalid(error: str) -> Admission:
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
        return _invalid(f"{channel}: explicit None is not a policy")
    if type(value) is not dict:
        return _invalid(f"{channel}: expected a mapping, got {type(value).__name__}")
    snapshot = dict(value)  # one read of the untouched input
    keys = set(snapshot)
    if any(type(k) is not str for k in keys):
        return _invalid(f"{channel}: non-string key")
    unknown = sorted(keys - _KEYS)
    if unknown:
        return _invalid(f"{channel}: unknown key(s) {', '.join(unknown)}")
    missing = sorted(_KEYS - keys)
    if missing:
        return _invalid(f"{channel}: missing key(s) {', '.join(missing)}")
    version = snapshot["schema_version"]
    if type(version) is not int or version != SCHEMA_VERSION:
        return _invalid(f"{channel}: schema_version must be the integer {SCHEMA_VERSION}, got {version!r}")
    protected = _identifiers(snapshot["protected_toolsets"], "protected_toolsets")
    if isinstance(protected, str):
        return _invalid(f"{channel}: {protected}")
    pins = _identifiers(snapshot["pinned_tool_names"], "pinned_tool_names")
    if isinstance(pins, str):
        return _invalid(f"{channel}: {pins}")
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
        return _invalid("the hook keyword and the agent attribute disagree")
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


def _as_snapshot(owners: Any, names: Tuple[str, ...]) -> Optional[OwnerSnapshot]:
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


# -- the envelope ----------------------------------------------------------------------
@dataclass(frozen=True)
class Envelope:
    admission: Admission
    authority: str
    session_id: str
    names: Tuple[str, ...]  # the surface the envelope was bound against, in its order
    owners: Optional[OwnerSnapshot]  # None: owner mapping uncertain
    protected_toolsets: FrozenSet[str]
    pinned: FrozenSet[str]  # the policy's pins (present or not)
    ceiling: Tuple[str, ...]  # protected names the host admitted, captured order
    pins: Tuple[str, ...]  # the floor: present pins (policy + worker), captured order
    worker: str
    prune_allowed: bool
    why_full: str = ""  # why pruning is not allowed, when it is not

    @property
    def name_set(self) -> FrozenSet[str]:
        return frozenset(self.names)

    @property
    def floor(self) -> FrozenSet[str]:
        return frozenset(self.pins)

    @property
    def may_expand(self) -> bool:
        return self.authority in (CAPTURED, NO_AUTHORITY_MODE)

    def owner(self, name: str) -> Tuple[bool, Optional[str]]:
        """(known, owner) from the bound snapshot."""
        if self.owners is not None:
            for n, o in self.owners:
                if n == name:
                    return True, o
        return False, None


def bind(admission: Admission, capture: Any, owners: Any, worker: str = NOT_WORKER, *,
         session_id: str = "", provenance: bool = True, attachable: bool = True,
         worker_toolset: str = DEFAULT_WORKER_TOOLSET) -> Envelope:
    """Bind one admission to one agent and session.

    ``capture``: the untouched surface (a ``surface.Capture`` or a sequence of names);
    ``None`` when it could not be read. ``owners``: an ``OwnerSnapshot``, a mapping or a
    look-up callable; ``None`` when uncertain. ``provenance``: the capture is the host's
    untouched surface (False: the surface was already touched, e.g. a failed restore or a
    contaminated session). ``attachable``: the router can hold state for this agent.
    """
    if not isinstance(admission, Admission):
        admission = _invalid("not an Admission")
    names: Tuple[str, ...] = ()
    capturable = capture is not None
    if capturable:
        try:
            raw = capture.names if hasattr(capture, "names") else capture
            names = tuple(raw)
            capturable = all(type(n) is str for n in names)
        except Exception:
            capturable = False
        if not capturable:
            names = ()
    protected = frozenset(admission.protected_toolsets)
    pinned = frozenset(admission.pinned_tool_names)

    def make(authority: str, snap: Optional[OwnerSnapshot], ceiling: Tuple[str, ...], pins: Tuple[str, ...],
             prune: bool, why: str) -> Envelope:
        return Envelope(admission, authority, session_id, names, snap, protected, pinned, ceiling, pins,
                        worker, prune, why)

    if not attachable:
        return make(INSTALLED_ONLY, None, (), (), False, "the router cannot attach to this agent")
    if not capturable:
        return make(UNCAPTURABLE, None, (), (), False, "the tool surface could not be captured")
    if not admission.is_valid:
        # No owner or definition look-up at all: the policy cannot be interpreted.
        return make(INVALID_MODE, None, (), (), False, "invalid admission policy: " + admission.error)
    snap = _as_snapshot(owners, names)
    if snap is None or len(set(names)) != len(names):
        ceiling = tuple(names)  # cannot classify: everything visible stays, nothing is pruned
        pins = tuple(n for n in names if n in pinned)
        authority = CAPTURED if provenance else NO_AUTHORITY_MODE
        return make(authority, None, ceiling, pins, False, "owner mapping is uncertain")
    owner_of = dict(snap)
    pin_set = set(n for n in names if n in pinned)
    if worker == WORKER:
        pin_set.update(n for n in names if owner_of.get(n) == worker_toolset)
    ceiling = tuple(n for n in names if n in pin_set or owner_of.get(n) in protected)
    pins = tuple(n for n in names if n in pin_set)
    if not provenance:
        return make(NO_AUTHORITY_MODE, snap, ceiling, pins, False, "no untouched host provenance")
    if worker == UNCERTAIN:
        return make(CAPTURED, snap, ceiling, pins, False, "worker identity is uncertain")
    return make(CAPTURED, snap, ceiling, pins, True, "")


# -- admission of candidates ---------------------------------------------------------
@dataclass(frozen=True)
class AdmitResult:
    allowed: Tuple[str, ...]
    denied: Tuple[str, ...]
    reason: str
    authority: str = CAPTURED
    denied_toolsets: Tuple[str, ...] = ()

    @property
    def mixed(self) -> bool:
        return bool(self.allowed) and bool(self.denied)

    @property
    def changes_nothing(self) -> bool:
        return not self.allowed


def _lookup(envelope: Envelope, name: str, owners: Any) -> Tuple[bool, Optional[str]]:
    known, owner = envelope.owner(name)
    if known:
        return True, owner
    if owners is None:
        return False, None
    try:
        if isinstance(owners, Mapping):
            if name not in owners:
                return False, None
            owner = owners[name]
        elif callable(owners):
            owner = owners(name)
        else:
            return False, None
    except Exception:
        return False, None
    if owner is not None and type(owner) is not str:
        return False, None
    return True, owner


def is_protected(envelope: Envelope, name: str, known: bool, owner: Optional[str]) -> bool:
    """Pinned names are protected; so are members of protected toolsets; an unknown owner
    is treated as protected whenever the policy protects anything (fail closed)."""
    if name in envelope.pinned:
        return True
    if not known:
        return bool(envelope.protected_toolsets or envelope.pinned)
    return owner in envelope.protected_toolsets


def admit(envelope: Envelope, candidate_names: Iterable[str], owners: Any = None) -> AdmitResult:
    """The one admission decision every expansion path uses.

    ``candidate_names``: tool names an expansion would add (already resolved from the
    requested toolsets). ``owners``: a mapping or look-up for names outside the bound
    snapshot. Returns which names may be installed, which are denied, and the reason.
    """
    cands: List[str] = []
    for n in candidate_names:
        if n not in cands:
            cands.append(n)
    if envelope.authority == INVALID_MODE:
        # No owner look-up, no marker, nothing added.
        return AdmitResult((), tuple(cands), NO_AUTHORITY_INVALID_POLICY, envelope.authority)
    if envelope.authority in (INSTALLED_ONLY, UNCAPTURABLE):
        return AdmitResult((), tuple(cands), NO_AUTHORITY, envelope.authority)
    allowed: List[str] = []
    denied: List[str] = []
    denied_sets: List[str] = []
    ceiling = frozenset(envelope.ceiling)
    for n in cands:
        if type(n) is not str or not n:
            denied.append(n)
            continue
        known, owner = _lookup(envelope, n, owners)
        protected = is_protected(envelope, n, known, owner)
        if envelope.authority == NO_AUTHORITY_MODE:
            ok = not protected
        else:
            ok = (not protected) or n in ceiling
        if ok:
            allowed.append(n)
        else:
            denied.append(n)
            if owner and owner not in denied_sets:
                denied_sets.append(owner)
    if envelope.authority == NO_AUTHORITY_MODE:
        reason = NO_AUTHORITY
    else:
        reason = DENIED_PROTECTED if denied and not allowed else READY  # mixed: READY + denied
    return AdmitResult(tuple(allowed), tuple(denied), reason, envelope.authority, tuple(denied_sets))


def floor(envelope: Optional[Envelope]) -> FrozenSet[str]:
    """Names no plan may prune."""
    return envelope.floor if envelope is not None else frozenset()


def may_prune(envelope: Optional[Envelope]) -> bool:
    return envelope is not None and envelope.authority == CAPTURED and envelope.prune_allowed


def clamp(envelope: Envelope, keep: Iterable[str], owners: Any = None) -> FrozenSet[str]:
    """A planned keep set made admissible: protected names outside the ceiling removed,
    the floor added."""
    keep = frozenset(keep)
    res = admit(envelope, sorted(keep), owners)
    return frozenset(res.allowed) | (envelope.floor & envelope.name_set)


def annotate(outcome: Dict[str, Any], result: AdmitResult, added: Sequence[str]) -> Dict[str, Any]:
    """Fold an ``AdmitResult`` into a ``recovery.outcome`` dict (a new dict is returned).

    A mixed request keeps its READY/ALREADY_LOADED reason and lists the denied part; a
    fully denied request reports the admission reason and adds nothing.
    """
    out = dict(outcome)
    out["denied"] = list(result.denied)
    if result.denied_toolsets:
        out["denied_toolsets"] = list(result.denied_toolsets)
    out["admission"] = result.authority
    if result.reason in (NO_AUTHORITY_INVALID_POLICY, NO_AUTHORITY):
        out["reason"] = result.reason
        if result.reason == NO_AUTHORITY_INVALID_POLICY:
            out["added"] = []
    elif result.denied and not added and not result.allowed:
        out["reason"] = DENIED_PROTECTED
    return out


# -- no-authority contamination ----------------------------------------------------------
@dataclass(frozen=True)
class Contamination:
    """Recorded (once, before assignment) when a NO_AUTHORITY session first appends ordinary
    definitions: from then on nothing in this session may capture or promote an envelope."""

    session_id: str
    first_names: Tuple[str, ...]


def mark_contaminated(existing: Optional[Contamination], session_id: str,
                      names: Sequence[str]) -> Contamination:
    """The marker to store: the existing one if any (immutable), else a new one."""
    if existing is not None:
        return existing
    return Contamination(session_id, tuple(names))


def may_capture(marker: Optional[Contamination]) -> bool:
    return marker is None


# -- one admission per agent and session ---------------------------------------------------
ENVELOPE_ATTR = "admission_envelope"


def bind_once(holder: Any, build: Callable[[], Envelope], attr: str = ENVELOPE_ATTR) -> Envelope:
    """Return the envelope bound to ``holder`` (the agent's router state), building it at
    most once. Same-session calls get the same object; disable/re-enable keep it (the
    holder keeps it); ``unbind`` at session end clears it."""
    lock = getattr(holder, "lock", None)
    if lock is None:
        lock = _fallback_lock(holder)
    with lock:
        current = getattr(holder, attr, None)
        if isinstance(current, Envelope):
            return current
        envelope = build()
        if not isinstance(envelope, Envelope):
            raise TypeError("build() must return an Envelope")
        setattr(holder, attr, envelope)
        return envelope


def unbind(holder: Any, attr: str = ENVELOPE_ATTR) -> None:
    lock = getattr(holder, "lock", None) or _fallback_lock(holder)
    with lock:
        if getattr(holder, attr, None) is not None:
            setattr(holder, attr, None)


_LOCKS_GUARD = threading.Lock()


def _fallback_lock(holder: Any) -> Any:
    with _LOCKS_GUARD:
        lock = getattr(holder, "_admission_lock", None)
        if lock is None:
            lock = threading.RLock()
            setattr(holder, "_admission_lock", lock)
        return lock


# -- all or nothing --------------------------------------------------------------------------
_ABSENT = object()


class RollbackFailed(RuntimeError):
    """An assignment failed and at least one rollback step failed too."""


def apply_all_or_nothing(setters: Sequence[Tuple[Any, str, Any]], *,
                         validate: Optional[Callable[[], Optional[str]]] = None,
                         lock: Any = None) -> None:
    """Run ``setattr(obj, attr, value)`` for each triple; on any failure restore every
    attribute already touched to the exact previous object (or delete it if it did not
    exist), in reverse order, then re-raise. ``validate`` runs before any setter; a
    returned string aborts with ``ValueError`` and nothing is touched."""
    setters = tuple(setters)
    if validate is not None:
        problem = validate()
        if problem:
            raise ValueError(problem)
    ctx = lock if lock is not None else _NullContext()
    with ctx:
        previous: List[Tuple[Any, str, Any]] = []
        for obj, attr, _ in setters:  # read everything before writing anything
            previous.append((obj, attr, getattr(obj, attr, _ABSENT)))
        done = 0
        try:
            for obj, attr, value in setters:
                setattr(obj, attr, value)
                done += 1
        except BaseException as exc:
            errors = []
            # Restore the failed one too: a setter may have half-written before raising.
            for obj, attr, old in reversed(previous[:done + 1]):
                try:
                    if old is _ABSENT:
                        if hasattr(obj, attr):
                            delattr(obj, attr)
                    elif getattr(obj, attr, _ABSENT) is not old:
                        setattr(obj, attr, old)
                except Exception as rb:  # keep going: restore as much as possible
                    errors.append(f"{attr}: {type(rb).__name__}")
            if errors:
                raise RollbackFailed(f"assignment failed ({type(exc).__name__}); rollback failed for "
                                     + ", ".join(errors)) from exc
            raise


class _NullContext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


def check_candidate(envelope: Envelope, candidate_names: Sequence[str], *,
                    previous: Optional[Sequence[str]] = None,
                    extra: Iterable[str] = ()) -> Optional[str]:
    """Validate a candidate surface before any setter runs; an error string or None.

    * every name is in the bound surface (or in ``extra``, e.g. the router's own tool);
    * names keep the bound order;
    * no protected name outside the ceiling (``names`` outside the ceiling that are
      protected cannot be in the bound surface, so this checks pins and the snapshot);
    * the floor is present;
    * with ``previous``: nothing previously shown disappears (monotonic growth).
    """
    extra = frozenset(extra)
    bound = envelope.names
    index = {n: i for i, n in enumerate(bound)}
    last = -1
    seen = set()
    for n in candidate_names:
        if n in seen:
            return f"duplicate name {n!r}"
        seen.add(n)
        if n in extra and n not in index:
            continue
        if n not in index:
            return f"{n!r} is not in the admitted surface"
        if index[n] < last:
            return f"{n!r} is out of captured order"
        last = index[n]
    if envelope.authority == CAPTURED and envelope.owners is not None:
        ceiling = frozenset(envelope.ceiling)
        for n in candidate_names:
            if n in extra:
                continue
            known, owner = envelope.owner(n)
            if is_protected(envelope, n, known, owner) and n not in ceiling:
                return f"{n!r} is protected and outside the ceiling"
    missing = [p for p in envelope.pins if p not in seen]
    if missing:
        return "pinned tool(s) missing: " + ", ".join(missing)
    if previous is not None:
        gone = [n for n in previous if n not in seen]
        if gone:
            return "surface would shrink: " + ", ".join(gone)
    return None


def installed_exactly(expected: Any, actual: Any) -> bool:
    """Retry is allowed only when the agent shows exactly the admitted installation."""
    return expected is not None and actual is expected


# -- failed restores and quarantine -------------------------------------------------------
RESTORE = "restore"  # the agent still shows our last commit: put the old envelope back
RELEASED = "released"  # the agent already shows the old capture
LEAVE = "leave"  # anything else: touch nothing, warn once


def quarantine_step(agent_tools: Any, committed_tools: Any, capture_tools: Any) -> str:
    """What to do with an agent that still carries a failed restore (by identity only)."""
    if capture_tools is not None and agent_tools is capture_tools:
        return RELEASED
    if committed_tools is not None and agent_tools is committed_tools:
        return RESTORE
    return LEAVE


@dataclass
class WarnOnce:
    """One warning per session."""

    _seen: set = field(default_factory=set)
    _lock: Any = field(default_factory=threading.Lock, repr=False)

    def first(self, session_id: str) -> bool:
        with self._lock:
            if session_id in self._seen:
                return False
            self._seen.add(session_id)
            return True


# -- the adapter's one call -----------------------------------------------------------------
def establish(hook_kwargs: Optional[Mapping[str, Any]], agent: Any, names: Optional[Sequence[str]],
              owner_of: Callable[[str], Optional[str]], *, session_id: str,
              task_env: Optional[str], dispatcher_reports: Callable[[], Optional[bool]], direct: bool,
              provenance: bool = True, attachable: bool = True,
              worker_toolset: str = DEFAULT_WORKER_TOOLSET) -> Envelope:
    """Read both channels, parse, and -- only for a valid policy -- evaluate the worker
    predicate once and take one ordered owner snapshot; bind the result.

    ``names``: the agent's tool names read straight from ``agent.tools`` (no registry
    call), ``None`` when they could not be read. ``dispatcher_reports`` is called at most
    once and only when ``task_env`` is non-empty; an exception counts as uncertainty.
    An invalid policy makes no owner, predicate or definition look-up at all.
    """
    hook_value, agent_value = read_channels(hook_kwargs, agent)
    adm = parse_admission(hook_value, agent_value)
    if not adm.is_valid or names is None:
        return bind(adm, names, None, NOT_WORKER, session_id=session_id, provenance=provenance,
                    attachable=attachable, worker_toolset=worker_toolset)
    worker = NOT_WORKER
    if task_env:
        try:
            reports = dispatcher_reports() if direct else False
        except Exception:
            reports = None
        worker = worker_status(task_env, reports, direct=direct)
    snap = snapshot_owners(tuple(names), owner_of)
    return bind(adm, tuple(names), snap, worker, session_id=session_id, provenance=provenance,
                attachable=attachable, worker_toolset=worker_toolset)


SLOT_ATTR = "_hermes_token_router_envelope"


@dataclass
class AgentSlot:
    """The router's admission state held *on the agent* (per agent, never process-global).

    ``envelope`` belongs to ``envelope.session_id``; ``restore_pending`` is set when that
    session's restore failed, which keeps the envelope (and the guard) alive across a
    reuse of the agent for another session: quarantine.
    """

    envelope: Envelope
    restore_pending: bool = False
    contamination: Optional[Contamination] = None
    lock: Any = field(default_factory=threading.RLock, repr=False)


def slot_of(agent: Any) -> Optional[AgentSlot]:
    try:
        slot = vars(agent).get(SLOT_ATTR)
    except TypeError:
        return None
    return slot if isinstance(slot, AgentSlot) else None


def can_attach(agent: Any) -> bool:
    try:
        vars(agent)
        return True
    except TypeError:
        return False


def envelope_for(agent: Any, session_id: str, build: Callable[[], Envelope]) -> Tuple[Envelope, bool]:
    """(envelope, quarantined). Same agent and session: the same object. A different
    session on an agent whose old restore is pending: the *old* envelope, quarantined.
    Otherwise a new envelope is built once and attached (if the agent takes attributes)."""
    slot = slot_of(agent)
    if slot is not None:
        with slot.lock:
            if slot.envelope.session_id == session_id:
                return slot.envelope, False
            if slot.restore_pending:
                return slot.envelope, True
    envelope = build()
    if can_attach(agent):
        with _LOCKS_GUARD:
            current = slot_of(agent)
            if current is not None and (current.envelope.session_id == session_id or current.restore_pending):
                return current.envelope, current.envelope.session_id != session_id
            vars(agent)[SLOT_ATTR] = AgentSlot(envelope)
    return envelope, False


def mark_restore(agent: Any, session_id: str, ok: bool) -> None:
    """After a session-end restore: success releases the slot, failure keeps it pending."""
    slot = slot_of(agent)
    if slot is None or slot.envelope.session_id != session_id:
        return
    with slot.lock:
        if ok:
            try:
                vars(agent).pop(SLOT_ATTR, None)
            except TypeError:
                pass
        else:
            slot.restore_pending = True


def record_contamination(agent: Any, session_id: str, names: Sequence[str]) -> Optional[Contamination]:
    """Call *before* assigning a NO_AUTHORITY append: stores the immutable marker once."""
    slot = slot_of(agent)
    if slot is None or slot.envelope.session_id != session_id:
        return None
    with slot.lock:
        slot.contamination = mark_contaminated(slot.contamination, session_id, names)
        return slot.contamination
