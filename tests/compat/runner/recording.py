"""Recorded oracles: Volcano's observed outcome of a scenario, checked in as
tests/compat/expected/<scenario>.yaml, and kube-scheduler's, as
tests/compat/expected/kube-scheduler/<scenario>.yaml, so that Tephra can be checked without
running either."""
import os
import time

import yaml

HEADER = """\
# {oracle}'s observed outcome of tests/compat/scenarios/{name}.yaml, recorded by
# `tests/compat/compat.py record{option} --scenario {name}`. Do not edit: re-record instead
# (README.md).
"""


def path(directory, name):
    return os.path.join(directory, f"{name}.yaml")


def save(directory, scenario, result, commit, oracle="volcano"):
    """Writes the recording; `commit` is the oracle's version (Volcano's commit, kube-scheduler's
    release)."""
    doc = {
        "scenario": scenario.name,
        "digest": scenario.digest,
        oracle: commit,
        "recorded": time.strftime("%Y-%m-%d", time.gmtime()),
        "checkpoints": {name: {"facts": facts, "settled": name not in result.unsettled}
                        for name, facts in result.checkpoints.items()},
    }
    if result.messages:
        doc["messages"] = result.messages
    os.makedirs(directory, exist_ok=True)
    with open(path(directory, scenario.name), "w") as f:
        f.write(HEADER.format(name=scenario.name,
                              oracle="Volcano" if oracle == "volcano" else oracle,
                              option="" if oracle == "volcano" else f" --oracle {oracle}"))
        yaml.safe_dump(doc, f, sort_keys=True, allow_unicode=True, width=100)


class Recording:
    def __init__(self, doc):
        self.doc = doc
        self.digest = doc.get("digest")
        self.commit = doc.get("volcano")
        self.checkpoints = {k: v.get("facts", {}) for k, v in (doc.get("checkpoints") or {}).items()}
        self.unsettled = [k for k, v in (doc.get("checkpoints") or {}).items() if not v.get("settled", True)]
        self.messages = doc.get("messages") or {}


def load(directory, name):
    """The Recording of scenario `name`, or None when there is none."""
    p = path(directory, name)
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return Recording(yaml.safe_load(f) or {})
