#!/usr/bin/env python3
"""Bundle the memory-ls language server and its libraries into the VS Code extension.

  python3 client-vscode/scripts/bundle_server.py build [--target linux-x64]
  python3 client-vscode/scripts/bundle_server.py lock

`build` fills client-vscode/bundled/libs/ for one VSIX target: `common/` holds memory_ls
and the libraries every supported CPython shares (pure Python, or abi3), `cpXY/` the
ones built for one CPython version; bundled/tool/server.py puts the right two on the
path at start. Wheels come from the package index with pip (`pip download
--only-binary=:all:` for the target's platform tags), pinned and hash-checked by the
lock files in client-vscode/bundled/requirements/, and are kept in a cache so a second
build needs no network. `lock` writes those lock files again from pyproject.toml's
dependencies (the newest versions that still support each CPython), with the sha256 of
every wheel PyPI has for them.

Needs Python 3.10+ with pip (`lock`: 3.11+ and `packaging`); the libraries are never
imported here.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import importlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "client-vscode" / "bundled"
LIBS = BUNDLED / "libs"
LOCKS = BUNDLED / "requirements"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memory-ls" / "wheels"

# Every CPython the VSIX supports. Keep in step with requires-python and the classifiers.
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
# Runtime dependencies the language server never imports: the MCP SDK (`memory-ls mcp`
# only) pulls in pydantic, starlette, httpx and more, megabytes a VSIX does not need.
LEFT_OUT = {"mcp"}
# Modules with native code the server needs; built wheels must provide them.
NATIVE = ("regex._regex", "yaml._yaml", "watchfiles._rust_notify", "rapidfuzz.fuzz_cpp")


def _manylinux(arch: str) -> list[str]:
    # VS Code itself needs glibc 2.28, so any manylinux wheel up to 2_28 runs where it does.
    return [f"manylinux_2_{minor}_{arch}" for minor in range(28, 16, -1)] + [
        f"manylinux2014_{arch}"
    ]


def _macos(arch: str, oldest: tuple[int, int]) -> list[str]:
    # pip matches platform tags literally: list every macOS version up to 11.0.
    versions = [(10, minor) for minor in range(9, 16)] + [(11, 0)]
    return [
        f"macosx_{major}_{minor}_{kind}"
        for major, minor in versions
        if (major, minor) >= oldest
        for kind in (arch, "universal2")
    ]


# VS Code's target names (`vsce package --target`) and the wheel platform tags for each.
TARGETS: dict[str, list[str]] = {
    "linux-x64": _manylinux("x86_64"),
    "linux-arm64": _manylinux("aarch64"),
    "alpine-x64": ["musllinux_1_2_x86_64", "musllinux_1_1_x86_64"],
    "alpine-arm64": ["musllinux_1_2_aarch64", "musllinux_1_1_aarch64"],
    "darwin-x64": _macos("x86_64", (10, 9)),
    "darwin-arm64": _macos("arm64", (11, 0)),
    "win32-x64": ["win_amd64"],
    # No win32-arm64: PyYAML publishes no Windows-on-Arm wheels.
}


def tag(python: str) -> str:
    """`cp313` for "3.13"."""
    return "cp" + python.replace(".", "")


def host_target() -> str:
    """The VS Code target of this machine (linux-x64, darwin-arm64, ...)."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform, "")
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if system == "linux" and Path("/etc/alpine-release").exists():
        system = "alpine"
    target = f"{system}-{arch}"
    if target not in TARGETS:
        sys.exit(f"bundle_server: no VSIX target for {sys.platform}/{machine}; pass --target")
    return target


def project() -> dict[str, object]:
    """pyproject.toml's [project] table."""
    try:
        # By name: the type check targets Python 3.10, which has no tomllib.
        tomllib = importlib.import_module("tomllib")
    except ModuleNotFoundError:
        sys.exit("bundle_server: reading pyproject.toml needs Python 3.11 or newer (tomllib)")
    with (ROOT / "pyproject.toml").open("rb") as file:
        table: dict[str, object] = tomllib.load(file)["project"]
    return table


def package_version() -> str:
    """memory_ls.__version__: the one version of the package and the extension."""
    text = (ROOT / "server" / "memory_ls" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if found is None:
        sys.exit("bundle_server: no __version__ in server/memory_ls/__init__.py")
    return found.group(1)


def extension_version() -> str:
    """The version in package.json."""
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    return str(manifest["version"])


def runtime_requirements() -> list[str]:
    """pyproject.toml's dependencies without the ones the language server never imports."""
    dependencies = project()["dependencies"]
    assert isinstance(dependencies, list)
    kept = []
    for requirement in dependencies:
        name = re.split(r"[\s<>=!~;\[]", str(requirement), maxsplit=1)[0]
        if normalize(name) not in LEFT_OUT:
            kept.append(str(requirement))
    return kept


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_name_version(filename: str) -> tuple[str, str]:
    """Distribution name and version of a wheel file name."""
    name, version = filename.split("-")[:2]
    return normalize(name), version


def wheel_tags(filename: str) -> tuple[str, str, str]:
    """Python, ABI and platform tags of a wheel file name."""
    python, abi, plat = filename[: -len(".whl")].split("-")[-3:]
    return python, abi, plat


def pip_download(
    python: str, target: str, dest: Path, args: list[str]
) -> subprocess.CompletedProcess[str]:
    """Download wheels for one CPython version and VSIX target with pip."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:"]
    for plat in TARGETS[target]:
        command += ["--platform", plat]
    command += ["--python-version", python, "--implementation", "cp", "--abi", tag(python)]
    command += ["--dest", str(dest), *args]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(
            f"bundle_server: pip could not download the wheels for CPython {python} "
            f"on {target}:\n{result.stderr.strip()}"
        )
    return result


def lock() -> None:
    """Write one lock file per CPython version: pins with the hashes of their wheels."""
    LOCKS.mkdir(parents=True, exist_ok=True)
    for python in PYTHONS:
        pins = sorted(resolve(python).items())
        lines = [
            f"# The language server's libraries for CPython {python}, bundled into the VSIX.",
            "# Written by `python3 client-vscode/scripts/bundle_server.py lock` from",
            "# pyproject.toml's dependencies (without the MCP SDK); do not edit.",
        ]
        for name, version in pins:
            hashes = wheel_hashes(name, version, python)
            lines.append(f"{name}=={version} \\")
            lines += [f"    --hash=sha256:{digest} \\" for digest in hashes[:-1]]
            lines.append(f"    --hash=sha256:{hashes[-1]}")
        (LOCKS / f"{tag(python)}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"locked {len(pins)} packages for CPython {python}")


def resolve(python: str) -> dict[str, str]:
    """The newest versions of the runtime requirements and theirs that run on this CPython."""
    # pip evaluates dependencies' markers for the Python it runs on, not for
    # --python-version, so the tree is walked here: one --no-deps download per level.
    from packaging.markers import Marker
    from packaging.requirements import Requirement

    environment = {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
    platform_keys = ("sys_platform", "platform_system", "platform_machine", "os_name")
    pins: dict[str, str] = {}
    wanted = [Requirement(text) for text in runtime_requirements()]
    with tempfile.TemporaryDirectory() as scratch:
        while wanted:
            new: list[Requirement] = []
            for requirement in wanted:
                name = normalize(requirement.name)
                if name in pins:
                    if pins[name] not in requirement.specifier:
                        sys.exit(
                            f"bundle_server: {name}=={pins[name]} conflicts with {requirement}"
                        )
                elif all(normalize(other.name) != name for other in new):
                    new.append(requirement)
            if not new:
                break
            level = Path(scratch) / str(len(pins))
            pip_download(python, "linux-x64", level, ["--no-deps", *(str(r) for r in new)])
            wanted = []
            for wheel in level.glob("*.whl"):
                name, version = wheel_name_version(wheel.name)
                pins[name] = version
                for line in wheel_metadata(wheel).splitlines():
                    if not line.startswith("Requires-Dist:"):
                        continue
                    requirement = Requirement(line.partition(":")[2].strip())
                    marker: Marker | None = requirement.marker
                    if marker is not None and any(key in str(marker) for key in platform_keys):
                        # One lock serves every target: that needs platform-free markers.
                        sys.exit(f"bundle_server: {name} has a platform marker: {requirement}")
                    if marker is None or marker.evaluate(environment):
                        requirement.marker = None
                        wanted.append(requirement)
    return pins


def wheel_metadata(wheel: Path) -> str:
    """The METADATA file of a wheel."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(name).decode("utf-8")


@functools.cache
def pypi_files(name: str) -> list[dict[str, Any]]:
    """Every file PyPI has of a project, with its hashes (the simple index in JSON, PEP 691)."""
    request = urllib.request.Request(
        f"https://pypi.org/simple/{name}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files: list[dict[str, Any]] = json.load(response)["files"]
    return files


def wheel_hashes(name: str, version: str, python: str) -> list[str]:
    """sha256 of every wheel on PyPI of name==version that can run on this CPython."""
    minor = int(python.split(".")[1])
    digests = []
    for file in pypi_files(name):
        filename = str(file["filename"])
        if not filename.endswith(".whl") or wheel_name_version(filename) != (name, version):
            continue
        py, abi, _ = wheel_tags(filename)
        runs = abi == "none" and any(p in {"py3", "py2"} or p == tag(python) for p in py.split("."))
        runs = runs or abi == tag(python)
        runs = runs or (abi == "abi3" and py.startswith("cp3") and int(py[3:]) <= minor)
        if runs:
            digests.append(str(file["hashes"]["sha256"]))
    if not digests:
        sys.exit(f"bundle_server: PyPI has no wheel of {name}=={version} for CPython {python}")
    return sorted(digests)


def locked_pins(locked: Path) -> set[tuple[str, str]]:
    """The (name, version) pairs a lock file pins."""
    pins = set()
    for line in locked.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith((" ", "#")):
            name, _, version = line.split(" ")[0].partition("==")
            pins.add((normalize(name), version))
    return pins


def download(target: str) -> dict[str, list[Path]]:
    """The locked wheels of every CPython version for the target (from the cache if there)."""
    wheels: dict[str, list[Path]] = {}

    def one(python: str) -> tuple[str, list[Path]]:
        locked = LOCKS / f"{tag(python)}.txt"
        dest = CACHE / target / tag(python)
        dest.mkdir(parents=True, exist_ok=True)
        pip_download(python, target, dest, ["--no-deps", "--require-hashes", "-r", str(locked)])
        pins = locked_pins(locked)
        # The cache may hold older downloads too: take only the locked ones.
        found = [path for path in dest.glob("*.whl") if wheel_name_version(path.name) in pins]
        chosen: dict[tuple[str, str], Path] = {}
        for path in sorted(found):
            chosen.setdefault(wheel_name_version(path.name), path)
        if set(chosen) != pins:
            sys.exit(f"bundle_server: missing wheels for CPython {python}: {pins - set(chosen)}")
        return python, sorted(chosen.values())

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(PYTHONS)) as pool:
        for python, paths in pool.map(one, PYTHONS):
            wheels[python] = paths
    return wheels


def unpack(wheel: Path, dest: Path) -> None:
    """Unpack a wheel as an install into site-packages would, without scripts or data."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            parts = member.filename.split("/")
            if parts[0].endswith(".data"):
                # purelib/platlib go into the library folder; scripts, headers, data do not.
                if len(parts) < 3 or parts[1] not in {"purelib", "platlib"}:
                    continue
                parts = parts[2:]
            if member.is_dir() or "__pycache__" in parts or ".." in parts:
                continue
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, target.open("wb") as out:
                shutil.copyfileobj(source, out)
            mode = member.external_attr >> 16
            if mode & 0o111:
                target.chmod(0o755)


def build(target: str) -> None:
    """Fill bundled/libs for the target: memory_ls and the locked wheels, unpacked."""
    version = package_version()
    if extension_version() != version:
        sys.exit(
            f"bundle_server: package.json says {extension_version()} and memory_ls "
            f"{version}; they must be the same version"
        )
    wheels = download(target)
    # A wheel every version uses that runs on all of them is unpacked once, into common/.
    everywhere = set.intersection(*({path.name for path in paths} for paths in wheels.values()))
    shared = {name for name in everywhere if wheel_tags(name)[1] in {"none", "abi3"}}
    if LIBS.exists():
        shutil.rmtree(LIBS)
    common = LIBS / "common"
    for name in sorted(shared):
        unpack(next(path for path in wheels[PYTHONS[0]] if path.name == name), common)
    packages: dict[str, dict[str, str]] = {}
    for python, paths in wheels.items():
        for path in paths:
            if path.name not in shared:
                unpack(path, LIBS / tag(python))
        packages[tag(python)] = dict(wheel_name_version(path.name) for path in paths)
    shutil.copytree(
        ROOT / "server" / "memory_ls",
        common / "memory_ls",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    manifest = {
        "version": version,
        "target": target,
        "pythons": [tag(python) for python in PYTHONS],
        "native": list(NATIVE),
        "packages": packages,
    }
    (LIBS / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    size = sum(path.stat().st_size for path in LIBS.rglob("*") if path.is_file())
    print(
        f"bundled memory-ls {version} for {target}, CPython {', '.join(PYTHONS)}: "
        f"{size / 1e6:.1f} MB in {LIBS.relative_to(ROOT)}"
    )


def main() -> None:
    """Parse the command line and run `build` or `lock`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="fill client-vscode/bundled/libs")
    build_parser.add_argument("--target", choices=sorted(TARGETS), help="default: this machine")
    commands.add_parser("lock", help="write the lock files again from pyproject.toml")
    args = parser.parse_args()
    if args.command == "lock":
        lock()
    else:
        build(args.target or host_target())


if __name__ == "__main__":
    main()
