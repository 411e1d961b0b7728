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


def linked_packages(binary):
    """{library path: Debian package} for every shared library the binary loads."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    found = {}
    for path in re.findall(r"=> (/\S+)", out):
        real = os.path.realpath(path)
        owner = None
        for candidate in (path, real, "/usr" + path, "/usr" + real):
            r = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
            if r.returncode == 0:
                owner = r.stdout.split(":")[0]
                break
        found[path] = owner
    return found


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    dockerfile, bin_dir = argv[1], argv[2]
    installed = runtime_packages(dockerfile) | BASE_IMAGE
    problems = []
    for daemon in DAEMONS:
        for path, package in linked_packages(os.path.join(bin_dir, daemon)).items():
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
