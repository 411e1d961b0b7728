#!/usr/bin/env python3
"""Fails when a file of the repository cites a document outside it.

Comments and documentation cite docs/ in the repository (CONTRIBUTING.md, "Comments"); the notes
the project started from are not part of it, so a citation of them leads a reader nowhere.

  self_contained_test.py ROOT        scan the tree below ROOT (build trees and .git skipped)
  self_contained_test.py --self-test check the scanner on a tree it makes
"""
import os
import re
import sys
import tempfile

# Spelled in pieces so that this file does not cite them itself. The Volcano build beside the
# repository (../shared/baselines/volcano, where tests/compat and tests/oracle look for it by
# default) is a program to run, not a document, so naming its place is allowed; so is the CEL
# conformance data the CEL conformance test reads (its directory, not a document in it).
CONFORMANCE_DATA = "/reference/cel-spec-conformance"
DATA_NOT_DOCUMENT = "(?![\\w/.-]*\\.md)"
FORBIDDEN = re.compile("|".join([
    re.escape("../" + "shared") + "(?!/baselines/|" + re.escape(CONFORMANCE_DATA) +
    DATA_NOT_DOCUMENT + ")",
    re.escape("shared/" + "reference") + "(?!" + re.escape(CONFORMANCE_DATA[len("/reference"):]) +
    DATA_NOT_DOCUMENT + ")",
    re.escape("volcano-" + "behaviour"),
    re.escape("DESIGN" + ".md"),
    re.escape("reference" + " §"),
]))
SKIPPED_DIRS = {".git", ".cache", "__pycache__"}


def skipped(top, name):
    # Build trees (build/, build-*/) sit in the source tree but are not part of it.
    return name in SKIPPED_DIRS or (top and name.startswith("build"))


def scan(root):
    """Returns "path:line: text" for every citation of an outside document below root."""
    findings = []
    for directory, dirs, files in os.walk(root):
        top = os.path.samefile(directory, root)
        dirs[:] = sorted(d for d in dirs if not skipped(top, d))
        for name in sorted(files):
            path = os.path.join(directory, name)
            if os.path.islink(path):
                continue  # its target is scanned where it lives
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except (UnicodeDecodeError, OSError):
                continue  # images and other binary files cite nothing
            for number, line in enumerate(lines, 1):
                if FORBIDDEN.search(line):
                    findings.append(f"{os.path.relpath(path, root)}:{number}: {line.strip()}")
    return findings


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(relative, text):
            path = os.path.join(root, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        write("a/bad.h", "// Queue rules (reference/volcano-" + "behaviour.md §3.4).\n")
        write("b/bad.txt", "# see ../" + "shared/DESIGN" + ".md\n")
        write("c/good.h", "// Queue rules (docs/compatibility.md §3.4).\n")
        write("c/good.sh", "baseline=$root/../" + "shared/baselines/volcano\n")
        write("c/good.cc", "// reads ../" + "shared/reference/cel-spec-conformance/ at run time\n")
        write("d/bad.cc", "// see ../" + "shared/reference/cel-spec-conformance/README" + ".md\n")
        write("e/bad.cc", "// see shared/" + "reference/other-schedulers" + ".md\n")
        write("build/skipped.h", "// ../" + "shared\n")
        with open(os.path.join(root, "c", "image.png"), "wb") as f:
            f.write(b"\x89PNG\xff\xfe volcano-" + b"behaviour")
        found = scan(root)
        expected = ["a/bad.h:1:", "b/bad.txt:1:", "d/bad.cc:1:", "e/bad.cc:1:"]
        if [f.split(" ", 1)[0] for f in found] != expected:
            print("scanner found", found, "expected", expected)
            return 1
    print("self-test passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    findings = scan(argv[1])
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} citation(s) of documents outside the repository; cite docs/ "
              "instead (docs/compatibility.md, docs/architecture.md)")
        return 1
    print("no citation of a document outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
