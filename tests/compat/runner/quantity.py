"""Kubernetes resource quantities as numbers (cores for cpu, bytes for the rest), so that two
sides writing `1000m` and `1`, or `1Gi` and `1073741824`, compare equal."""
import re

_SUFFIX = {
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
    "E": 1e18, "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def parse(value):
    """A number for a quantity string or number; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    m = _QUANTITY.match(str(value).strip())
    if not m:
        return None
    return float(m.group(1)) * _SUFFIX[m.group(2) or ""]


def tidy(number):
    """A quantity as a short, stable value: integers stay integers, others keep 6 digits."""
    if number is None:
        return None
    if abs(number - round(number)) < 1e-9:
        return int(round(number))
    return float(f"{number:.6g}")


def resource_list(rl):
    """{name: number} of a ResourceList."""
    return {k: tidy(parse(v)) for k, v in (rl or {}).items()}
