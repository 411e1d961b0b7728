#!/usr/bin/env python3
"""An SPDX 2.3 JSON SBOM of a container image's root filesystem, made offline from what the
image itself records: every installed package of its dpkg database (name, version,
architecture, source package, maintainer, a purl), and Tephra's daemons in /usr/local/bin with
their checksums. hack/build-image.sh runs it on the mounted image.

    image-sbom.py --root DIR --name tephra --version 0.1.0 --revision SHA --image-id ID
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import sys
import urllib.parse

DAEMONS = ("tephra-scheduler", "tephra-controller-manager", "tephra-admission")


def dpkg_packages(text):
    """Installed packages of a dpkg status file: dicts of their single-line fields."""
    packages = []
    for paragraph in re.split(r"\n\s*\n", text):
        fields = {}
        for line in paragraph.splitlines():
            if line[:1] in (" ", "\t") or ":" not in line:
                continue  # continuation lines (descriptions, conffiles)
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        if fields.get("Package") and fields.get("Status", "").endswith(" installed"):
            packages.append(fields)
    return packages


def os_release(root):
    fields = {}
    path = os.path.join(root, "etc/os-release")
    if os.path.exists(path):
        for line in open(path):
            key, eq, value = line.strip().partition("=")
            if eq:
                fields[key] = value.strip('"')
    return fields


def spdx_id(text):
    """SPDX identifiers allow letters, digits, '.' and '-' only."""
    return "SPDXRef-" + re.sub(r"[^A-Za-z0-9.-]", "-", text)


def purl(name, version, arch, distro):
    quote = lambda s: urllib.parse.quote(s, safe="")
    return f"pkg:deb/debian/{quote(name)}@{quote(version)}?arch={quote(arch)}&distro={quote(distro)}"


def deb_package(fields, distro):
    name, version = fields["Package"], fields.get("Version", "")
    arch = fields.get("Architecture", "")
    source = fields.get("Source", name)
    # "Source: name (version)" when the source version differs from the binary's.
    m = re.fullmatch(r"(\S+)(?: \((\S+)\))?", source)
    source_name, source_version = (m.group(1), m.group(2) or version) if m else (source, version)
    package = {
        "SPDXID": spdx_id(f"deb-{name}-{arch}"),
        "name": name,
        "versionInfo": version,
        "supplier": "Organization: Debian",
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "sourceInfo": f"built from the Debian source package {source_name} {source_version}",
        "primaryPackagePurpose": "LIBRARY" if name.startswith("lib") else "APPLICATION",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                          "referenceLocator": purl(name, version, arch, distro)}],
    }
    if fields.get("Maintainer"):
        package["originator"] = "Person: " + fields["Maintainer"]
    return package


def checksums(path):
    sha1, sha256 = hashlib.sha1(), hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha1.update(block)
            sha256.update(block)
    return [{"algorithm": "SHA1", "checksumValue": sha1.hexdigest()},
            {"algorithm": "SHA256", "checksumValue": sha256.hexdigest()}]


def sbom(root, name, version, revision, image_id, created):
    release = os_release(root)
    distro = f"{release.get('ID', 'debian')}-{release.get('VERSION_ID', '')}".rstrip("-")
    with open(os.path.join(root, "var/lib/dpkg/status"), encoding="utf-8") as f:
        debs = [deb_package(p, distro) for p in dpkg_packages(f.read())]
    image = {
        "SPDXID": "SPDXRef-image", "name": f"{name} container image", "versionInfo": version,
        "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
        "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION", "primaryPackagePurpose": "CONTAINER",
        "checksums": [{"algorithm": "SHA256", "checksumValue": image_id}],
        "comment": f"image ID sha256:{image_id}; base {release.get('PRETTY_NAME', distro)}",
    }
    daemons = {
        "SPDXID": "SPDXRef-tephra", "name": name, "versionInfo": version,
        "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
        "licenseConcluded": "NOASSERTION", "licenseDeclared": "Apache-2.0",
        "copyrightText": "NOASSERTION", "primaryPackagePurpose": "APPLICATION",
        "sourceInfo": f"built from source revision {revision}",
    }
    files, relationships = [], [
        {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
         "relatedSpdxElement": "SPDXRef-image"},
        {"spdxElementId": "SPDXRef-image", "relationshipType": "CONTAINS",
         "relatedSpdxElement": "SPDXRef-tephra"}]
    for daemon in DAEMONS:
        path = os.path.join(root, "usr/local/bin", daemon)
        if not os.path.exists(path):
            continue
        files.append({"SPDXID": spdx_id(f"file-{daemon}"), "fileName": f"./usr/local/bin/{daemon}",
                      "checksums": checksums(path), "licenseConcluded": "NOASSERTION",
                      "copyrightText": "NOASSERTION", "fileTypes": ["BINARY"]})
        relationships.append({"spdxElementId": "SPDXRef-tephra", "relationshipType": "CONTAINS",
                              "relatedSpdxElement": files[-1]["SPDXID"]})
    relationships += [{"spdxElementId": "SPDXRef-image", "relationshipType": "CONTAINS",
                       "relatedSpdxElement": d["SPDXID"]} for d in debs]
    return {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{name}-{version}",
        "documentNamespace": f"https://spdx.org/spdxdocs/{name}-{version}-{image_id}",
        "creationInfo": {"created": created, "creators": ["Tool: tephra-image-sbom"]},
        "packages": [image, daemons] + sorted(debs, key=lambda d: d["name"]),
        "files": files,
        "relationships": relationships,
    }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("root", "name", "version", "revision", "image-id"):
        parser.add_argument(f"--{flag}", required=True)
    args = parser.parse_args(argv[1:])
    image_id = args.image_id.removeprefix("sha256:")
    if not re.fullmatch(r"[0-9a-f]{64}", image_id):
        parser.error(f"--image-id: want 64 hex digits, got {args.image_id!r}")
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    json.dump(sbom(args.root, args.name, args.version, args.revision, image_id, created),
              sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
