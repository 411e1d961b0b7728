#!/usr/bin/env python3
"""A syntax check for Tephra's Dockerfiles, standing in for hadolint (not packaged by Debian) on
machines without a container engine.

    check_dockerfile.py CONTEXT DOCKERFILE...   check each file against build context CONTEXT
    check_dockerfile.py --self-test             show that each rule rejects a broken file

Rules: line continuations and parser directives; known instructions with their flags; ARG
before the first FROM, then FROM first; FROM [--platform=P] IMAGE [AS name] with unique stage
names; COPY --from names an earlier stage; exec forms are JSON arrays of strings; COPY/ADD
sources exist in the context and are not excluded by its .dockerignore; the last stage runs as a
non-root USER (the chart's pods run with runAsNonRoot).
"""
import fnmatch
import json
import os
import re
import sys
import tempfile

INSTRUCTIONS = {
    "ADD": {"chown", "chmod", "link", "checksum", "keep-git-dir", "exclude"},
    "ARG": set(), "CMD": set(),
    "COPY": {"from", "chown", "chmod", "link", "parents", "exclude"},
    "ENTRYPOINT": set(), "ENV": set(), "EXPOSE": set(),
    "FROM": {"platform"}, "HEALTHCHECK": {"interval", "timeout", "start-period",
                                          "start-interval", "retries"},
    "LABEL": set(), "MAINTAINER": set(), "ONBUILD": set(),
    "RUN": {"mount", "network", "security"},
    "SHELL": set(), "STOPSIGNAL": set(), "USER": set(), "VOLUME": set(), "WORKDIR": set(),
}
EXEC_FORM = {"CMD", "ENTRYPOINT", "RUN", "SHELL", "VOLUME"}


def logical_lines(text):
    """(line number, text) of each instruction: continuations joined, comments dropped."""
    out, buf, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if buf and line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction is removed
        if not buf:
            start = number
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((start, buf + line))
        buf = ""
    if buf:
        raise ValueError(f"line {start}: the last instruction ends with a line continuation")
    return out


def split_flags(args):
    flags = {}
    while args.startswith("--"):
        word, _, args = args.partition(" ")
        key, eq, value = word[2:].partition("=")
        if not eq:
            raise ValueError(f"flag --{key} needs a value (--{key}=...)")
        flags[key] = value
        args = args.lstrip()
    return flags, args


def dockerignore(context):
    path = os.path.join(context, ".dockerignore")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def ignored(rel, patterns):
    verdict = False
    for p in patterns:
        negate = p.startswith("!")
        p = p.lstrip("!").strip("/")
        parts = rel.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        glob = p.replace("**/", "*")  # "**/" may match nothing or any directories
        if any(fnmatch.fnmatch(x, p) or fnmatch.fnmatch(x, glob) for x in prefixes):
            verdict = not negate
    return verdict


def check(text, context):
    """Returns the problems found in one Dockerfile's text."""
    problems = []
    try:
        lines = logical_lines(text)
    except ValueError as e:
        return [str(e)]
    # Parser directives (# syntax=...) are only read before the first instruction: fine as-is.
    global_args, stages, seen_from, user = set(), [], False, None
    patterns = dockerignore(context)
    for number, line in lines:
        word, _, args = line.strip().partition(" ")
        inst, args = word.upper(), args.strip()
        where = f"line {number} ({inst})"
        if inst not in INSTRUCTIONS:
            problems.append(f"line {number}: unknown instruction {word!r}")
            continue
        try:
            flags, rest = split_flags(args)
        except ValueError as e:
            problems.append(f"{where}: {e}")
            continue
        for key in flags:
            if key not in INSTRUCTIONS[inst]:
                problems.append(f"{where}: unknown flag --{key}")
        if not seen_from and inst not in ("ARG", "FROM"):
            problems.append(f"{where}: only ARG may come before the first FROM")
        if inst == "ARG" and not seen_from:
            global_args.add(rest.split("=")[0])
        if inst == "FROM":
            seen_from, user = True, None
            m = re.fullmatch(r"(\S+)(?:\s+[aA][sS]\s+([a-z][a-z0-9_.-]*))?", rest)
            if not m:
                problems.append(f"{where}: expected FROM IMAGE [AS name], got {rest!r}")
                continue
            for var in re.findall(r"\$\{?(\w+)", m.group(1)):
                if var not in global_args:
                    problems.append(f"{where}: ${var} is not an ARG declared before the first FROM")
            if m.group(2) in stages:
                problems.append(f"{where}: stage name {m.group(2)!r} used twice")
            stages.append(m.group(2))
        if inst in EXEC_FORM and rest.startswith("["):
            try:
                form = json.loads(rest)
                if not all(isinstance(x, str) for x in form):
                    raise ValueError
            except ValueError:
                problems.append(f"{where}: exec form is not a JSON array of strings: {rest}")
        if inst in ("COPY", "ADD"):
            srcs = rest.split()[:-1]
            if not srcs:
                problems.append(f"{where}: needs a source and a destination")
            if "from" in flags:
                if flags["from"] not in stages and not re.search(r"[:/]", flags["from"]):
                    problems.append(f"{where}: --from={flags['from']} is not an earlier stage")
                continue
            for src in srcs:
                rel = os.path.normpath(src).lstrip("/")
                if rel != "." and not os.path.exists(os.path.join(context, rel)):
                    problems.append(f"{where}: source {src} does not exist in the context")
                elif rel != "." and ignored(rel, patterns):
                    problems.append(f"{where}: source {src} is excluded by .dockerignore")
        if inst == "USER":
            user = rest.split(":")[0]
    if not stages:
        problems.append("no FROM instruction")
    elif user in (None, "root", "0"):
        problems.append("the last stage runs as root: add USER with a non-root user")
    return problems


BROKEN = {
    "unknown instruction": "FROM debian\nRUNN true\nUSER 1\n",
    "instruction before FROM": "RUN true\nFROM debian\nUSER 1\n",
    "dangling continuation": "FROM debian\nUSER 1\nRUN true \\\n",
    "unknown flag": "FROM debian\nCOPY --form=build /a /b\nUSER 1\n",
    "unknown stage": "FROM debian AS build\nFROM debian\nCOPY --from=biuld /a /b\nUSER 1\n",
    "bad exec form": 'FROM debian\nUSER 1\nENTRYPOINT ["/bin/x",]\n',
    "undeclared ARG in FROM": "FROM debian:${RELEASE}\nUSER 1\n",
    "missing source": "FROM debian\nCOPY no-such-file /x\nUSER 1\n",
    "ignored source": "FROM debian\nCOPY build/dev /x\nUSER 1\n",
    "runs as root": "FROM debian\nRUN true\n",
    "duplicate stage": "FROM debian AS a\nFROM debian AS a\nUSER 1\n",
}


def main(argv):
    if argv[1:] == ["--self-test"]:
        with tempfile.TemporaryDirectory() as context:  # a context with an ignored build/
            os.makedirs(os.path.join(context, "build", "dev"))
            with open(os.path.join(context, ".dockerignore"), "w") as f:
                f.write("build/\n")
            failed = [name for name, text in BROKEN.items() if not check(text, context)]
        for name in failed:
            print(f"self-test: the '{name}' Dockerfile was not rejected")
        print(f"self-test: {len(BROKEN) - len(failed)}/{len(BROKEN)} broken Dockerfiles rejected")
        return 1 if failed else 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    status = 0
    for path in argv[2:]:
        with open(path) as f:
            problems = check(f.read(), argv[1])
        for p in problems:
            print(f"{path}: {p}")
        print(f"{path}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
        status |= bool(problems)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
