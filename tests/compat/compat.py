#!/usr/bin/env python3
"""Differential scenarios: the same scenario on Tephra and on real Volcano, compared fact by
fact, and on kube-scheduler where a scenario names facts it is the oracle for (README.md in
this folder).

  compat.py run   [--live] [--scenario NAME ...]   Tephra against the recorded outcomes
                                                   (--live: against the oracles run now, side by side)
  compat.py record [--scenario NAME ...]           run Volcano and (re)write expected/NAME.yaml
                   [--oracle kube-scheduler]       (kube-scheduler: expected/kube-scheduler/NAME.yaml)
                                                   (run --record: every side, and record)
  compat.py check                                  check every scenario file and recording (no cluster)
  compat.py list                                   the scenarios, one line each
  compat.py down                                   stop the control planes a --keep run left up
  compat.py recompare FILE [--live]                compare again the facts a run saved with --json
                                                   (no cluster; --live: its Volcano facts, not
                                                   the recordings)

Options: --keep leaves the control planes up, --reuse uses running ones (fast iteration);
--prefix P names them P-t, P-v and P-k (default compat); --tephra-bin DIR (default build/dev/bin);
--baseline DIR (default $VOLCANO_BASELINE, else ../shared/baselines/volcano beside the
repository); --json FILE writes the findings.
Exit status: 0 when every difference is explained, 1 otherwise, 2 on bad usage or scenarios.
"""
import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import compare, execute, recording, scenario as scenarios, sides  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCENARIOS = os.path.join(HERE, "scenarios")
EXPECTED = os.path.join(HERE, "expected")
# kube-scheduler's recordings, for the scenarios that name facts it is the oracle for.
EXPECTED_KUBE = os.path.join(EXPECTED, "kube-scheduler")
KUBE = "kube-scheduler"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


COMMON = os.path.join(HERE, "common.yaml")


def load_scenarios(names):
    common = scenarios.load_common(COMMON)
    if names:
        missing = [n for n in names if not os.path.exists(os.path.join(SCENARIOS, f"{n}.yaml"))]
        if missing:
            raise scenarios.ScenarioError(f"no scenario named {', '.join(missing)} in {SCENARIOS}")
        return [scenarios.load(os.path.join(SCENARIOS, f"{n}.yaml"), ROOT, common) for n in names]
    return scenarios.load_all(SCENARIOS, ROOT, common)


def make_sides(args, want_tephra, want_volcano, want_kube=False):
    out = {}
    if want_tephra:
        out["tephra"] = sides.TephraSide(ROOT, f"{args.prefix}-t", log, args.tephra_bin)
    if want_volcano:
        cache = os.path.join(os.path.expanduser("~"), ".cache", "tephra", "volcano")
        out["volcano"] = sides.VolcanoSide(ROOT, f"{args.prefix}-v", log, args.baseline, cache)
    if want_kube:
        out[KUBE] = sides.KubeSchedulerSide(ROOT, f"{args.prefix}-k", log)
    return out


def run_in_parallel(fns):
    """Runs each callable in its own thread; their results in order."""
    results = [None] * len(fns)
    errors = [None] * len(fns)

    def call(i, fn):
        try:
            results[i] = fn()
        except Exception as e:  # reported by the caller
            errors[i] = e
    threads = [threading.Thread(target=call, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
    return results


def fmt(value):
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    text = repr(value) if isinstance(value, str) and ("\n" in value or value == "") else str(value)
    return text if len(text) <= 70 else text[:67] + "..."


def print_findings(sc, findings, out):
    by_cp = {}
    for f in findings:
        by_cp.setdefault(f.checkpoint, []).append(f)
    for cp, fs in by_cp.items():
        print(f"    checkpoint {cp}:", file=out)
        for f in sorted(fs, key=lambda f: (f.kind not in compare.FAILING, f.kind, f.key)):
            tag = f.kind.upper() if f.kind in compare.FAILING else f.kind
            print(f"      {tag:<20} {f.key}", file=out)
            oracle = KUBE if f.key.startswith(KUBE + ":") else "volcano"
            if f.kind != compare.KNOWN_GONE:
                print(f"      {'':<20}   {oracle}: {fmt(f.volcano)}   tephra: {fmt(f.tephra)}", file=out)
            if f.label:
                print(f"      {'':<20}   ({f.label})", file=out)


def side_error_findings(name, result):
    out = []
    if result.error:
        out.append(compare.Finding(compare.DIFFERENCE, "*", f"{name} run failed", "", "", result.error))
    return out


def stale(sc):
    return compare.Finding(compare.STALE, "*", "scenario changed since recording", "", "",
                           f"re-record: compat.py record --scenario {sc.name}")


def judge_kube(sc, tephra, kube_live, rec):
    """Tephra against kube-scheduler on the facts the scenario names (`kube_live` when it ran
    now, else its recording `rec`)."""
    if sc.kube_scheduler is None:
        return []
    findings = []
    if kube_live is None:
        if rec is None:
            return [compare.Finding(compare.STALE, "*", f"{KUBE}: no recording", "", "",
                                    f"record: compat.py record --oracle {KUBE} --scenario {sc.name}")]
        if rec.digest != sc.digest:
            findings.append(compare.Finding(compare.STALE, "*", f"{KUBE}: scenario changed since recording",
                                            "", "", f"re-record: compat.py record --oracle {KUBE} "
                                            f"--scenario {sc.name}"))
        kube = rec.checkpoints
    else:
        kube = kube_live
    return findings + compare.compare_oracle(sc, kube, tephra, KUBE)


def judge(sc, tephra, volcano_live, rec, common_hits):
    """Findings for one scenario: Tephra's facts against Volcano's (`volcano_live` when Volcano
    ran now, else the recording `rec`), and a live Volcano against its recording."""
    if sc.oracle != "volcano":
        return compare.compare_scenario(sc, None, tephra, common_hits)
    findings = []
    if volcano_live is not None:
        if rec is not None and rec.digest == sc.digest:
            for cp in sc.checkpoints():
                findings += compare.compare_recording(cp, rec.checkpoints.get(cp.name, {}),
                                                      volcano_live.get(cp.name, {}))
        elif rec is not None:
            findings.append(stale(sc))
        volcano = volcano_live
    else:
        if rec.digest != sc.digest:
            findings.append(stale(sc))
        volcano = rec.checkpoints
    return findings + compare.compare_scenario(sc, volcano, tephra, common_hits)


class Summary:
    """Counts over a run, and its end: common marks that matched nothing, known issues."""

    def __init__(self):
        self.failing, self.common_hits, self.known, self.report = 0, {}, {}, []

    def add(self, sc, findings, line, extra):
        bad = [f for f in findings if f.kind in compare.FAILING]
        self.failing += bool(bad)
        print(f"{'FAIL' if bad else 'ok':<4} {sc.name}  {line}", flush=True)
        print_findings(sc, findings, sys.stdout)
        for f in findings:
            if f.kind == compare.KNOWN:
                self.known.setdefault(f.label, set()).add(sc.name)
        self.report.append({"scenario": sc.name, "findings": [f.as_dict() for f in findings], **extra})

    def finish(self, count, whole_suite, seconds, json_path):
        if whole_suite:
            for m, hits in self.common_hits.items():
                if not hits:
                    print(f"known-gone (common.yaml) issue-{m.label} {','.join(m.keys)}: no "
                          "difference left under this mark in any scenario; remove it")
        if self.known:
            print("\nknown differences (issue: scenarios):")
            for label, names in sorted(self.known.items()):
                print(f"  {label}: {len(names)}: {', '.join(sorted(names))}")
        print(f"\n{count} scenarios, {self.failing} with unexplained differences, {seconds:.0f}s "
              f"({seconds / max(1, count):.1f}s per scenario; load average {os.getloadavg()[0]:.2f})")
        if json_path:
            with open(json_path, "w") as f:
                json.dump({"scenarios": self.report, "seconds": round(seconds, 1)}, f, indent=1)
        return 1 if self.failing else 0


def cmd_run(args):
    try:
        selected = load_scenarios(args.scenario)
    except scenarios.ScenarioError as e:
        log(f"error: {e}")
        return 2
    record_kube = args.oracle == KUBE
    if args.command == "record":
        selected = [s for s in selected
                    if (s.kube_scheduler is not None if record_kube else s.oracle == "volcano")]
    live = args.live or args.record or args.command == "record"
    want_tephra = args.command == "run"
    want_volcano = live and not (args.command == "record" and record_kube) and \
        any(s.oracle == "volcano" for s in selected)
    want_kube = live and (args.command != "record" or record_kube) and \
        any(s.kube_scheduler is not None for s in selected)
    if args.command == "run" and not live:
        missing = [s.name for s in selected if s.oracle == "volcano" and recording.load(EXPECTED, s.name) is None]
        if missing:
            log(f"error: no recording for {', '.join(missing)}: run `compat.py record --scenario NAME`")
            return 2
    try:
        active = make_sides(args, want_tephra, want_volcano, want_kube)
        t0 = time.time()
        run_in_parallel([lambda s=s: s.up(reuse=args.reuse) for s in active.values()])
        log(f"control planes ready in {time.time() - t0:.1f}s")
    except (sides.SideError, OSError) as e:
        log(f"error: {e}")
        return 2

    summary = Summary()
    t_suite = time.time()
    try:
        for sc in selected:
            log(f"scenario {sc.name}")
            runners = {}
            if "tephra" in active:
                runners["tephra"] = execute.Timeline(active["tephra"], sc, log)
            if "volcano" in active and sc.oracle == "volcano":
                runners["volcano"] = execute.Timeline(active["volcano"], sc, log)
            if KUBE in active and sc.kube_scheduler is not None:
                runners[KUBE] = execute.Timeline(active[KUBE], sc, log)
            t_sc = time.time()
            results = dict(zip(runners, run_in_parallel([r.run for r in runners.values()])))
            elapsed = time.time() - t_sc
            findings = []
            for name, res in results.items():
                findings += side_error_findings(name, res)
            rec = recording.load(EXPECTED, sc.name) if sc.oracle == "volcano" else None
            volcano = results.get("volcano")
            if (args.command == "record" or args.record) and volcano is not None and not volcano.error:
                if args.command == "record":
                    findings += compare.check_volcano(sc, volcano.checkpoints)
                recording.save(EXPECTED, sc, volcano, active["volcano"].commit)
                log(f"  recorded expected/{sc.name}.yaml")
                rec = recording.load(EXPECTED, sc.name)
            kube = results.get(KUBE)
            if (args.command == "record" or args.record) and kube is not None and not kube.error:
                recording.save(EXPECTED_KUBE, sc, kube, active[KUBE].version(), KUBE)
                log(f"  recorded expected/kube-scheduler/{sc.name}.yaml")
            if "tephra" in results:
                findings += judge(sc, results["tephra"].checkpoints,
                                  volcano.checkpoints if volcano is not None else None, rec,
                                  summary.common_hits)
                findings += judge_kube(sc, results["tephra"].checkpoints,
                                       kube.checkpoints if kube is not None else None,
                                       recording.load(EXPECTED_KUBE, sc.name))
            sides_time = "  ".join(f"{n} {r.seconds:.1f}s (setup {r.setup_seconds:.1f}s)" for n, r in results.items())
            unsettled = {n: r.unsettled for n, r in results.items() if r.unsettled}
            summary.add(sc, findings, f"[{elapsed:.1f}s: {sides_time}]" +
                        (f"  unsettled: {unsettled}" if unsettled else ""),
                        {"seconds": round(elapsed, 1), "unsettled": unsettled,
                         "facts": {n: r.checkpoints for n, r in results.items()}})
            if args.verbose:
                for name, res in results.items():
                    for key, msg in res.messages.items():
                        print(f"      {name} {key}: {msg}")
    finally:
        if not args.keep:
            run_in_parallel([s.down for s in active.values()])
    return summary.finish(len(selected), not args.scenario and args.command == "run",
                          time.time() - t_suite, args.json)


def cmd_recompare(args):
    """Findings again from the facts a run saved with --json, against the current scenarios,
    marks and recordings (no cluster): for working on marks and tolerances."""
    saved = {s["scenario"]: s for s in json.load(open(args.facts))["scenarios"]}
    selected = [s for s in load_scenarios(args.scenario) if s.name in saved]
    summary = Summary()
    for sc in selected:
        facts = saved[sc.name].get("facts") or {}
        if "tephra" not in facts:
            continue
        rec = recording.load(EXPECTED, sc.name) if sc.oracle == "volcano" else None
        found = judge(sc, facts["tephra"], facts.get("volcano") if args.live else None, rec,
                      summary.common_hits)
        found += judge_kube(sc, facts["tephra"], facts.get(KUBE) if args.live else None,
                            recording.load(EXPECTED_KUBE, sc.name))
        summary.add(sc, found, "(saved facts)", {})
    return summary.finish(len(selected), not args.scenario, 0, None)


def cmd_check(args):
    """Every scenario parses and names its fields right; every recording belongs to a scenario
    and matches its digest."""
    try:
        selected = load_scenarios(None)
    except scenarios.ScenarioError as e:
        print(f"error: {e}")
        return 2
    problems = []
    names = {s.name for s in selected}
    for s in selected:
        rec = recording.load(EXPECTED, s.name)
        if s.oracle == "volcano" and rec is None:
            problems.append(f"{s.name}: no recording (compat.py record --scenario {s.name})")
        elif rec is not None and s.oracle == "stated":
            problems.append(f"{s.name}: has oracle: stated but a recording in expected/")
        elif rec is not None and rec.digest != s.digest:
            problems.append(f"{s.name}: recording is stale (scenario changed); re-record")
        elif rec is not None:
            missing = [cp.name for cp in s.checkpoints() if cp.name not in rec.checkpoints]
            if missing:
                problems.append(f"{s.name}: recording lacks checkpoints {', '.join(missing)}")
    for s in selected:
        rec = recording.load(EXPECTED_KUBE, s.name)
        if s.kube_scheduler is not None and rec is None:
            problems.append(f"{s.name}: no kube-scheduler recording "
                            f"(compat.py record --oracle {KUBE} --scenario {s.name})")
        elif rec is not None and s.kube_scheduler is None:
            problems.append(f"{s.name}: has a kube-scheduler recording but names no facts to compare")
        elif rec is not None and rec.digest != s.digest:
            problems.append(f"{s.name}: kube-scheduler recording is stale (scenario changed); re-record")
    with_kube = {s.name for s in selected if s.kube_scheduler is not None}
    for directory, known in ((EXPECTED, names), (EXPECTED_KUBE, with_kube)):
        if not os.path.isdir(directory):
            continue
        for f in sorted(os.listdir(directory)):
            if f.endswith(".yaml") and f[:-5] not in known:
                problems.append(f"{os.path.relpath(directory, HERE)}/{f}: no scenario of that name")
    for p in problems:
        print(p)
    print(f"{len(selected)} scenarios checked, {len(problems)} problems")
    return 1 if problems else 0


def cmd_list(args):
    for s in load_scenarios(None):
        marks = sorted({m.label for cp in s.checkpoints() for m in cp.known if not m.common})
        tags = [f"issue {s.issue}"] if s.issue else []
        if s.oracle == "stated":
            tags.append("stated oracle")
        if s.kube_scheduler is not None:
            tags.append("kube-scheduler oracle")
        if marks:
            tags.append("known: " + ", ".join(marks))
        if any(not m.common for cp in s.checkpoints() for m in cp.intentional):
            tags.append("intentional")
        desc = " ".join(s.description.split())
        print(f"{s.name:<40} {desc[:110]}" + (f"  [{'; '.join(tags)}]" if tags else ""))
    return 0


def cmd_down(args):
    for s in make_sides(args, True, True, True).values():
        s.down()
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("run", "record", "check", "list", "down", "recompare"))
    p.add_argument("facts", nargs="?", help="recompare: the --json file of a run")
    p.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    p.add_argument("--live", action="store_true", help="run Volcano too and compare against it")
    p.add_argument("--record", action="store_true",
                   help="with run: also (re)write the recordings from the live oracles' runs")
    p.add_argument("--oracle", choices=("volcano", KUBE), default="volcano",
                   help="record: whose outcome to record (kube-scheduler: the scenarios that "
                        "name facts to compare with it)")
    p.add_argument("--keep", action="store_true", help="leave the control planes up")
    p.add_argument("--reuse", action="store_true", help="use running control planes")
    p.add_argument("--prefix", default="compat", help="control planes PREFIX-t and PREFIX-v")
    p.add_argument("--unique", action="store_true", help="add the process id to the prefix")
    p.add_argument("--tephra-bin", default=os.path.join(ROOT, "build", "dev", "bin"))
    p.add_argument("--baseline", default=os.environ.get(
        "VOLCANO_BASELINE", os.path.join(os.path.dirname(ROOT), "shared", "baselines", "volcano")))
    p.add_argument("--json", help="write the findings to this file")
    p.add_argument("-v", "--verbose", action="store_true", help="also print admission messages")
    p.add_argument("--skip-unless-env", metavar="VAR",
                   help="exit 77 (skipped) unless the environment variable VAR is 1")
    args = p.parse_args(argv)
    if args.skip_unless_env and os.environ.get(args.skip_unless_env) != "1":
        print(f"skipped: set {args.skip_unless_env}=1 to run")
        return 77
    if args.unique:
        args.prefix = f"{args.prefix}-{os.getpid()}"
    if args.command == "recompare" and not args.facts:
        p.error("recompare needs the --json file of a run")
    return {"run": cmd_run, "record": cmd_run, "check": cmd_check, "list": cmd_list,
            "down": cmd_down, "recompare": cmd_recompare}[args.command](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
