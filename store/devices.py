"""The device table, `store/catalogs/devices.toml`: per GPU its 16-bit peak and the share of it
a `fill` reaches, each row measured or from the datasheet with the utilisation assumed (the
file's header says how to read a row). `fill --dry-run --device-profile NAME` estimates
embedding on NAME from it (`DeviceProfile.flops`); the runs table's MFU divides by the peak of
the row a CUDA device's name matches (`peak_tflops`). The docs page Reference -> Devices
renders it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache

from store.catalog import CATALOG_DIR
from store.did_you_mean import check_names
from store.vocab.errors import GenebError

DEVICES_FILE = CATALOG_DIR / "devices.toml"
BASES: dict[str, str] = {
    "measured": "the utilisation fill reached on that device, measured",
    "datasheet": "the vendor's peak, the utilisation assumed",
}


@dataclass(frozen=True)
class DeviceProfile:
    name: str                   # what --device-profile takes
    label: str                  # how messages name it
    match: str                  # a part of the CUDA device's name (torch's)
    peak_tflops: float          # dense 16-bit tensor peak
    peak_source: str
    basis: str                  # a BASES key
    utilisation: float          # the share of the peak a fill reaches there
    utilisation_source: str     # the measurement (command, run, date), or the assumption

    @property
    def flops(self) -> float:
        """FLOP/s a `fill` reaches on it."""
        return self.peak_tflops * self.utilisation * 1e12

    @property
    def basis_text(self) -> str:
        """The figure and what it rests on, in words (the dry run's notes)."""
        share = f"{self.utilisation * 100:.1f} % of the {self.label}'s"
        if self.basis == "measured":
            return (f"{share} 16-bit peak of {self.peak_tflops:g} TFLOP/s, the share fill "
                    f"reached there (measured: {self.utilisation_source})")
        return (f"{share} datasheet 16-bit peak of {self.peak_tflops:g} TFLOP/s (utilisation "
                f"assumed: {self.utilisation_source})")


@cache
def device_profiles() -> dict[str, DeviceProfile]:
    """The table by name, checked: known fields, a known basis, a peak and a utilisation
    in (0, 1]."""
    with open(DEVICES_FILE, "rb") as f:
        data = tomllib.load(f)
    names = {f.name for f in fields(DeviceProfile)}
    out: dict[str, DeviceProfile] = {}
    for i, row in enumerate(data.get("device", []), 1):
        where = f"{DEVICES_FILE}: device {i} ({row.get('name', '?')})"
        if set(row) != names:
            raise GenebError(f"{where}: fields {sorted(set(row) ^ names)} missing or unknown")
        if row["basis"] not in BASES:
            raise GenebError(f"{where}: basis {row['basis']!r} is not one of "
                             f"{', '.join(BASES)}")
        if not (isinstance(row["peak_tflops"], int | float) and row["peak_tflops"] > 0
                and isinstance(row["utilisation"], int | float)
                and 0 < row["utilisation"] <= 1):
            raise GenebError(f"{where}: peak_tflops must be above 0 and utilisation in (0, 1]")
        if row["name"] in out:
            raise GenebError(f"{where}: the name {row['name']!r} is given twice")
        out[row["name"]] = DeviceProfile(**row)
    return out


def device_profile(name: str) -> DeviceProfile:
    """The row `--device-profile` names; an unknown name is one GenebError with the closest
    known ones (`store.did_you_mean`)."""
    profiles = device_profiles()
    check_names("device profile", [name], profiles, option="--device-profile")
    return profiles[name]


def profile_of(device_name: str) -> DeviceProfile | None:
    """The row of a CUDA device by its name (torch's): the longest `match` it contains."""
    found = [p for p in device_profiles().values() if p.match in device_name]
    return max(found, key=lambda p: len(p.match)) if found else None


def peak_tflops(device_name: str) -> float | None:
    """The 16-bit peak of a CUDA device by its name; None where the table has no row."""
    profile = profile_of(device_name)
    return profile.peak_tflops if profile else None
