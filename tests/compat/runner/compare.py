"""Compares one checkpoint's facts: Tephra against Volcano (observed live or recorded), with the
scenario's tolerances, ignores, expectations and its known/intentional marks."""
import fnmatch

# Finding kinds. FAILING ones make the run exit non-zero.
DIFFERENCE = "difference"              # Tephra differs from Volcano, nothing explains it
INTENTIONAL_MISMATCH = "intentional-mismatch"  # Tephra misses its documented outcome
EXPECT_VOLCANO = "expect-volcano"      # Volcano does not do what the scenario says it does
EXPECT_TEPHRA = "expect-tephra"        # Tephra does not do what the scenario states
STALE = "stale-recording"              # live Volcano no longer matches the recording
KNOWN = "known"                        # a difference marked as a known bug
INTENTIONAL = "intentional"            # Tephra differs on purpose and shows its documented outcome
KNOWN_GONE = "known-gone"              # a known mark whose difference is gone: remove the mark
KNOWN_CHANGED = "known-changed"        # Tephra's value under a known mark is not the one stated
FAILING = (DIFFERENCE, INTENTIONAL_MISMATCH, EXPECT_VOLCANO, EXPECT_TEPHRA, STALE)

ABSENT = "(absent)"


class Finding:
    def __init__(self, kind, checkpoint, key, volcano, tephra, label=""):
        self.kind, self.checkpoint, self.key = kind, checkpoint, key
        self.volcano, self.tephra, self.label = volcano, tephra, label

    def as_dict(self):
        return {"kind": self.kind, "checkpoint": self.checkpoint, "key": self.key,
                "volcano": self.volcano, "tephra": self.tephra, "label": self.label}


def _matches(key, globs):
    return any(fnmatch.fnmatchcase(key, g) for g in globs)


def _tolerance(key, tolerance):
    best = 0
    for glob, t in tolerance.items():
        if fnmatch.fnmatchcase(key, glob):
            best = max(best, t)
    return best


def same(a, b, tol=0):
    if a == b:
        return True
    numeric = (int, float)
    if isinstance(a, numeric) and isinstance(b, numeric) and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(a - b) <= tol
    return False


def _show(state, key):
    return state.get(key, ABSENT) if state is not None else ABSENT


def compared_keys(checkpoint, *states):
    keys = set()
    for s in states:
        if s is not None:
            keys.update(s)
    return sorted(k for k in keys
                  if not _matches(k, checkpoint.ignore) or _matches(k, checkpoint.compare))


def compare_checkpoint(checkpoint, volcano, tephra, oracle="volcano"):
    """(findings, hits per known mark) for one checkpoint. `volcano` is None for scenarios
    with a stated oracle."""
    findings = []
    cp = checkpoint.name
    # The scenario's own marks decide before the common ones; within each, intentional first.
    ordered = [m for m in checkpoint.intentional + checkpoint.known if not m.common] + \
              [m for m in checkpoint.intentional + checkpoint.known if m.common]

    def mark_for(key):
        for m in ordered:
            if _matches(key, m.keys) and all(
                    fnmatch.fnmatchcase(str(_show(volcano if side == "volcano" else tephra, key)), glob)
                    for side, glob in m.when.items()):
                return m
        return None

    def known(key, v, t):
        """A KNOWN finding when a known mark covers the difference, else None."""
        m = mark_for(key)
        if m is None or m.kind != "known":
            return None
        known_hits[id(m)] += 1
        return Finding(KNOWN, cp, key, v, t, f"issue-{m.label}")

    known_hits = {id(m): 0 for m in checkpoint.known}
    if oracle == "volcano":
        for key in compared_keys(checkpoint, volcano, tephra):
            v, t = _show(volcano, key), _show(tephra, key)
            m = mark_for(key)
            if m is not None and m.kind == "intentional":
                continue  # checked against the documented outcome below
            if same(v, t, _tolerance(key, checkpoint.tolerance)):
                continue
            findings.append(known(key, v, t) or Finding(DIFFERENCE, cp, key, v, t))
    for m in checkpoint.intentional:
        for key, want in m.tephra.items():
            t = _show(tephra, key)
            if same(want, t, _tolerance(key, checkpoint.tolerance)):
                findings.append(Finding(INTENTIONAL, cp, key, _show(volcano, key), t, m.label))
            else:
                findings.append(Finding(INTENTIONAL_MISMATCH, cp, key, _show(volcano, key), t,
                                        f"{m.label}; documented outcome: {want!r}"))
    for key, want in checkpoint.expect.items():
        tol = _tolerance(key, checkpoint.tolerance)
        v, t = _show(volcano, key), _show(tephra, key)
        if oracle == "volcano" and not same(want, v, tol):
            findings.append(Finding(EXPECT_VOLCANO, cp, key, v, t, f"the scenario expects {want!r}"))
        m = mark_for(key)
        if same(want, t, tol) or (m is not None and m.kind == "intentional"):
            continue
        k = known(key, want if oracle == "stated" else v, t)
        if k is None:
            findings.append(Finding(EXPECT_TEPHRA, cp, key, v, t, f"the scenario expects {want!r}"))
        elif oracle == "stated":
            findings.append(k)  # with Volcano, the difference itself was reported above
    for m in checkpoint.known:
        for key, stated in m.tephra.items():
            t = _show(tephra, key)
            if not same(stated, t, _tolerance(key, checkpoint.tolerance)) and known_hits[id(m)]:
                findings.append(Finding(KNOWN_CHANGED, cp, key, _show(volcano, key), t,
                                        f"issue-{m.label} says Tephra shows {stated!r}"))
    return findings, known_hits


def compare_scenario(scenario, volcano, tephra, common_hits=None):
    """Findings for every checkpoint; `volcano` and `tephra` map checkpoint names to facts
    (`volcano` is None for a stated oracle). A known mark of the scenario that matched no
    difference at any checkpoint is reported as gone; common marks count their hits in
    `common_hits` (mark -> hits) for the caller to judge over the whole run."""
    findings, hits, marks = [], {}, {}
    for cp in scenario.checkpoints():
        if cp.name not in tephra:
            continue
        got, cp_hits = compare_checkpoint(cp, None if volcano is None else volcano.get(cp.name, {}),
                                          tephra[cp.name], scenario.oracle)
        findings.extend(got)
        for m in cp.known:
            marks[id(m)] = m
            hits[id(m)] = hits.get(id(m), 0) + cp_hits.get(id(m), 0)
    for mid, m in marks.items():
        if m.common:
            if common_hits is not None:
                common_hits[m] = common_hits.get(m, 0) + hits[mid]
        elif not hits[mid]:
            findings.append(Finding(KNOWN_GONE, "*", ",".join(m.keys), "", "",
                                    f"issue-{m.label}: no difference left under this mark; remove it"))
    return findings


def check_volcano(scenario, volcano):
    """EXPECT_VOLCANO findings: where Volcano does not do what the scenario says it does."""
    findings = []
    for cp in scenario.checkpoints():
        facts = volcano.get(cp.name, {})
        for key, want in cp.expect.items():
            if not same(want, _show(facts, key), _tolerance(key, cp.tolerance)):
                findings.append(Finding(EXPECT_VOLCANO, cp.name, key, _show(facts, key), "",
                                        f"the scenario expects {want!r}"))
    return findings


def compare_recording(checkpoint, recorded, live):
    """Volcano now against its recording: STALE findings for every difference beyond the
    checkpoint's tolerance (the recording must be refreshed)."""
    findings = []
    for key in compared_keys(checkpoint, recorded, live):
        r, v = _show(recorded, key), _show(live, key)
        if not same(r, v, _tolerance(key, checkpoint.tolerance)):
            findings.append(Finding(STALE, checkpoint.name, key, v, r, "recorded value in the tephra column"))
    return findings


def compare_oracle(scenario, oracle, tephra, name):
    """Tephra against a second oracle (kube-scheduler, for placement validity): every fact the
    scenario names under `kube-scheduler.compare` must be the same, at every checkpoint. The
    findings' keys start with "NAME:"."""
    findings = []
    globs = scenario.kube_scheduler["compare"]
    for cp in scenario.checkpoints():
        if cp.name not in tephra:
            continue
        o, t = oracle.get(cp.name, {}), tephra[cp.name]
        for key in sorted(k for k in set(o) | set(t) if _matches(k, globs)):
            ov, tv = _show(o, key), _show(t, key)
            if not same(ov, tv, _tolerance(key, cp.tolerance)):
                findings.append(Finding(DIFFERENCE, cp.name, f"{name}:{key}", ov, tv, f"against {name}"))
    return findings
