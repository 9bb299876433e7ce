"""Host admission envelope: the router never broadens what the host admitted.

A host (or a plugin acting for it) may say which *protected* toolsets an agent may have and
which tools must stay visible (*pins*). The router narrows and expands surfaces, so every
expansion path (route, ``request_toolset``, pruned-call recovery, post-tool recovery,
fallback) asks this module one question -- ``admit`` -- and the planner asks another --
``floor``. The ``pre_tool_call`` guard (``guard.py``) enforces the same envelope for tools
reached by paths the router does not control (the tool_search bridge).

Pure: plain data in, frozen data out, no Hermes imports and no state. The host adapter
(``host.py``) supplies the surface, the owner look-up and the worker predicate; what the
router remembers per agent (the bound envelope, quarantine, the contamination marker) and
the ``pre_tool_call`` hook live in ``admission_state.py``; the all-or-nothing write that
``check_candidate`` guards lives with the surface mutation (``surface_mutation.py``).

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

from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from .admission_policy import (DEFAULT_WORKER_TOOLSET, NOT_WORKER, UNCERTAIN, WORKER, Admission, OwnerSnapshot,
                               as_snapshot, invalid_admission, parse_admission, read_channels, snapshot_owners,
                               worker_status)

# Reason codes of every expansion answer (``request_toolset`` and the recovery path); the
# one definition, imported wherever a reason is produced or checked.
READY = "READY"
ALREADY_LOADED = "ALREADY_LOADED"
UNKNOWN_TOOLSET = "UNKNOWN_TOOLSET"
UNRESOLVED_TOOL = "UNRESOLVED_TOOL"
NO_AUTHORITY = "NO_AUTHORITY"
NO_AUTHORITY_INVALID_POLICY = "NO_AUTHORITY_INVALID_POLICY"
DENIED_PROTECTED = "DENIED_PROTECTED"
ERROR = "ERROR"  # request_toolset failed inside the router; nothing changed
READY_VIA_TOOL_SEARCH = "READY_VIA_TOOL_SEARCH"  # deferred by the host: reachable through tool_call only

# Envelope authority.
CAPTURED = "captured"
NO_AUTHORITY_MODE = "no_authority"
INVALID_MODE = "invalid"
INSTALLED_ONLY = "installed_only"
UNCAPTURABLE = "uncapturable"


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
        admission = invalid_admission("not an Admission")
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
    snap = as_snapshot(owners, names)
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
