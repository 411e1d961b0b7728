#!/usr/bin/env python3
"""The runtime stage of deploy/Dockerfile installs every shared library the daemons link: each
library `ldd` resolves for the built binaries must come from a Debian package that the stage's
`apt-get install` names or that debian:bookworm-slim already has. Without a container engine
this is how a new dependency (e.g. gRPC in a daemon) is caught before an image fails to start.

    image_libraries_test.py DOCKERFILE BIN_DIR
"""
import os
import re
import subprocess
import sys

DAEMONS = ("tephra-scheduler", "tephra-controller-manager", "tephra-admission")
# Packages of debian:bookworm-slim that these libraries may come from (essential packages and
# the dependencies of dpkg and apt).
BASE_IMAGE = {"libc6", "libgcc-s1", "libstdc++6", "liblzma5", "zlib1g", "libzstd1", "libbz2-1.0",
              "libselinux1", "libpcre2-8-0", "libgnutls30", "libsystemd0", "libudev1"}


# Sanitizer runtimes of the asan preset; the image is built with the release preset.
SANITIZERS = re.compile(r"^lib(asan|ubsan|lsan|tsan)\d*$")


def runtime_packages(dockerfile):
    """Packages named by `apt-get install` in the last stage."""
    text = open(dockerfile).read().replace("\\\n", " ")
    last_stage = re.split(r"(?im)^FROM\s", text)[-1]
    packages = set()
    for command in re.findall(r"apt-get install ([^&;\n]*)", last_stage):
        packages |= {w for w in command.split() if not w.startswith("-")}
    return packages


def linked_libraries(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return re.findall(r"=> (/\S+)", out)


def owners(paths):
    """{library path: Debian package or None}, with one dpkg query for all (each is slow)."""
    candidates = {p: [p, os.path.realpath(p)] for p in paths}
    for c in candidates.values():  # /lib is /usr/lib (usrmerge); dpkg knows one of the two
        c += ["/usr" + x for x in c if not x.startswith("/usr/")]
    queried = sorted({x for c in candidates.values() for x in c})
    out = subprocess.run(["dpkg", "-S", *queried], capture_output=True, text=True).stdout
    package_of = {}
    for line in out.splitlines():
        package, _, path = line.partition(": ")
        package_of[path] = package.split(",")[0].split(":")[0]
    return {p: next((package_of[x] for x in c if x in package_of), None)
            for p, c in candidates.items()}


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    dockerfile, bin_dir = argv[1], argv[2]
    installed = runtime_packages(dockerfile) | BASE_IMAGE
    problems = []
    linked = {d: linked_libraries(os.path.join(bin_dir, d)) for d in DAEMONS}
    package_of = owners({p for paths in linked.values() for p in paths})
    for daemon, paths in linked.items():
        for path in paths:
            package = package_of[path]
            if package is not None and SANITIZERS.match(package):
                continue
            if package is None:
                problems.append(f"{daemon}: {path} belongs to no Debian package")
            elif package not in installed:
                problems.append(f"{daemon}: {path} comes from {package}, which the runtime "
                                f"stage of {dockerfile} does not install")
    for p in problems:
        print("FAIL:", p)
    print(f"image_libraries_test: runtime stage installs {sorted(runtime_packages(dockerfile))}; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
