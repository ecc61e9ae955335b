#!/usr/bin/env python3
"""Bundle the memory-ls language server and its libraries into the VS Code extension.

  python3 client-vscode/scripts/bundle_server.py build [--target linux-x64] [--out DIR]
  python3 client-vscode/scripts/bundle_server.py lock

`build` fills client-vscode/bundled/libs/ for one VSIX target: `common/` holds memory_ls
and the libraries every supported CPython shares (pure Python, or abi3), `cpXY/` the
ones built for one CPython version, `cpXY-cpZW/` those a few versions share (a newer
release that dropped the oldest Python); bundle.json lists each version's folders and
bundled/tool/server.py puts them on the path at start. Wheels come from the package
index with pip (`pip download --only-binary=:all:` for the target's platform tags),
pinned and hash-checked by the lock files in client-vscode/bundled/requirements/, and
are kept in a cache so a second build needs no network. `lock` writes those lock files
again from pyproject.toml's dependencies (the newest versions that still support each
CPython), with the sha256 of every wheel PyPI has for them.

The bundle is everything `pip install memory-ls` would install: the language server's
libraries and the MCP SDK with what it pulls in (pydantic, starlette, cryptography…), so
that `memory-ls mcp` runs from the VSIX alone too. A dependency only some platforms need
(pywin32 on Windows) is locked with a marker naming those platforms.

Needs only Python 3.10+ and pip, for both commands: `packaging` and `tomli` are taken
from pip's own copies when they are not installed. The libraries are never imported here.
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
# Modules with native code the servers need; built wheels must provide them. The
# launcher's --check imports them all: the language server's, then the MCP SDK's.
NATIVE = (
    "regex._regex",
    "yaml._yaml",
    "watchfiles._rust_notify",
    "rapidfuzz.fuzz_cpp",
    "pydantic_core._pydantic_core",
    "rpds.rpds",
    "cryptography.hazmat.bindings._rust",
    "_cffi_backend",
)

# Parts of a wheel no server needs, left out of the bundle: pywin32's manual and its
# Pythonwin IDE (a GUI) are 3.8 MB of the 6.9 MB wheel of each Windows version; the MCP
# SDK needs win32api, win32con, win32job and pywintypes (win32/, pywin32_system32/).
LEFT_OUT = {"pywin32": ("PyWin32.chm", "pythonwin")}


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


def platform_markers(target: str) -> dict[str, str]:
    """The values of the platform's environment markers (PEP 508) on a VSIX target."""
    system, arch = target.split("-")
    sys_platform = "linux" if system == "alpine" else system
    machine = {
        ("linux", "x64"): "x86_64",
        ("linux", "arm64"): "aarch64",
        ("darwin", "x64"): "x86_64",
        ("darwin", "arm64"): "arm64",
        ("win32", "x64"): "AMD64",
    }[(sys_platform, arch)]
    return {
        "sys_platform": sys_platform,
        "platform_system": {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}[sys_platform],
        "os_name": "nt" if sys_platform == "win32" else "posix",
        "platform_machine": machine,
        "platform_release": "",
        "platform_version": "",
    }


def environment(python: str, target: str, extra: str = "") -> dict[str, str]:
    """Every environment marker's value for one CPython version on one VSIX target."""
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "implementation_version": f"{python}.0",
        "platform_python_implementation": "CPython",
        **platform_markers(target),
        "extra": extra,
    }


def packaging_module(name: str) -> Any:
    """A module of `packaging` (`markers`, `requirements`): the installed one, else pip's copy."""
    try:
        return importlib.import_module(f"packaging.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(f"pip._vendor.packaging.{name}")


def marker_holds(marker: str, python: str, target: str) -> bool:
    """Whether a lock file's marker holds for this CPython version on this target."""
    return bool(packaging_module("markers").Marker(marker).evaluate(environment(python, target)))


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
        toml = importlib.import_module("tomllib")
    except ModuleNotFoundError:
        # Python 3.10: pip carries tomli, which tomllib is.
        toml = importlib.import_module("pip._vendor.tomli")
    with (ROOT / "pyproject.toml").open("rb") as file:
        table: dict[str, object] = toml.load(file)["project"]
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
    """pyproject.toml's dependencies: all of them (the MCP SDK too) go into the VSIX."""
    dependencies = project()["dependencies"]
    assert isinstance(dependencies, list)
    return [str(requirement) for requirement in dependencies]


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
            f"# The libraries of memory-ls for CPython {python}, bundled into the VSIX.",
            "# Written by `python3 client-vscode/scripts/bundle_server.py lock` from",
            "# pyproject.toml's dependencies (the MCP SDK's too); do not edit.",
        ]
        for name, entries in pins:
            for version, targets in entries:
                hashes = wheel_hashes(name, version, python)
                marker = targets_marker(targets, python)
                lines.append(f"{name}=={version}{'' if marker is None else f' ; {marker}'} \\")
                lines += [f"    --hash=sha256:{digest} \\" for digest in hashes[:-1]]
                lines.append(f"    --hash=sha256:{hashes[-1]}")
        (LOCKS / f"{tag(python)}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"locked {len(pins)} packages for CPython {python}")


def resolve(python: str) -> dict[str, list[tuple[str, frozenset[str]]]]:
    """The newest versions of the runtime requirements and theirs that run on this CPython,
    each with the VSIX targets it is for: one version for all the targets that need the
    package, unless a target has no wheel of it (cryptography 50 has none for Intel Macs):
    that target's tree is then walked on its own, for the newest versions it has wheels of."""
    walked = walk(python, frozenset(TARGETS))
    lacking = {
        target
        for name, (version, targets) in walked.items()
        for target in targets
        if not has_wheel(name, version, python, target)
    }
    pins = {
        name: [(version, targets - lacking)]
        for name, (version, targets) in walked.items()
        if targets - lacking
    }
    for target in sorted(lacking):
        for name, (version, _) in walk(python, frozenset({target})).items():
            entries = pins.setdefault(name, [])
            same = [i for i, (other, _) in enumerate(entries) if other == version]
            if same:
                entries[same[0]] = (version, entries[same[0]][1] | {target})
            else:
                entries.append((version, frozenset({target})))
    return pins


def walk(python: str, targets: frozenset[str]) -> dict[str, tuple[str, frozenset[str]]]:
    """The newest versions of the runtime requirements and theirs for this CPython on these
    targets (downloaded for linux-x64 when it is one of them), each with the targets that
    need it."""
    # pip evaluates dependencies' markers for the Python it runs on, not for
    # --python-version and --platform, so the tree is walked here, for every target at
    # once: one --no-deps download per level.
    preferred = "linux-x64" if "linux-x64" in targets else min(targets)
    requirement_class = packaging_module("requirements").Requirement
    pins: dict[str, str] = {}
    requires: dict[str, list[Any]] = {}
    needed: dict[str, set[str]] = {}
    seen: set[tuple[str, str, str]] = set()
    wanted = [
        (requirement, target)
        for requirement in map(requirement_class, runtime_requirements())
        for target in sorted(targets)
        if requirement.marker is None or requirement.marker.evaluate(environment(python, target))
    ]
    with tempfile.TemporaryDirectory() as scratch:
        while wanted:
            # Download what is not pinned yet, for a target that needs it (the preferred one
            # if it does).
            new: dict[str, tuple[Any, str]] = {}
            for requirement, target in wanted:
                name = normalize(requirement.name)
                if name not in pins and (name not in new or target == preferred):
                    new[name] = (requirement, target)
            for target in sorted({target for _, target in new.values()}):
                level = Path(scratch) / f"{len(pins)}-{target}"
                specs = [f"{r.name}{r.specifier}" for r, t in new.values() if t == target]
                pip_download(python, target, level, ["--no-deps", *specs])
                for wheel in level.glob("*.whl"):
                    name, version = wheel_name_version(wheel.name)
                    pins[name] = version
                    requires[name] = [
                        requirement_class(line.partition(":")[2].strip())
                        for line in wheel_metadata(wheel).splitlines()
                        if line.startswith("Requires-Dist:")
                    ]
            # Each package (and each extra of it asked for) brings its own requirements.
            following = []
            for requirement, target in wanted:
                name = normalize(requirement.name)
                if not requirement.specifier.contains(pins[name], prereleases=True):
                    sys.exit(f"bundle_server: {name}=={pins[name]} conflicts with {requirement}")
                needed.setdefault(name, set()).add(target)
                for extra in ("", *sorted(requirement.extras)):
                    if (name, extra, target) in seen:
                        continue
                    seen.add((name, extra, target))
                    for dependency in requires[name]:
                        marker = dependency.marker
                        if marker is None or marker.evaluate(environment(python, target, extra)):
                            following.append((dependency, target))
            wanted = following
    return {name: (pins[name], frozenset(need)) for name, need in needed.items()}


def targets_marker(targets: frozenset[str], python: str) -> str | None:
    """A marker that holds on exactly these VSIX targets (None: on all of them)."""
    if targets == set(TARGETS):
        return None
    clauses = []
    for system in sorted({platform_markers(target)["sys_platform"] for target in targets}):
        same = {target for target in TARGETS if platform_markers(target)["sys_platform"] == system}
        if same <= targets:
            clauses.append(f'sys_platform == "{system}"')
            continue
        for machine in sorted(
            {platform_markers(target)["platform_machine"] for target in targets & same}
        ):
            clauses.append(f'(sys_platform == "{system}" and platform_machine == "{machine}")')
    marker = " or ".join(clauses) if len(clauses) > 1 else clauses[0].strip("()")
    wrong = [
        target for target in TARGETS if marker_holds(marker, python, target) != (target in targets)
    ]
    if wrong:
        sys.exit(f"bundle_server: no marker holds on exactly {sorted(targets)} (wrong on {wrong})")
    return marker


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


def runs_on(filename: str, python: str) -> bool:
    """Whether a wheel (by its file name) can run on this CPython version."""
    py, abi, _ = wheel_tags(filename)
    if abi == "none":
        return any(p in {"py3", "py2"} or p == tag(python) for p in py.split("."))
    if abi == "abi3":
        minor = int(python.split(".")[1])
        return py.startswith("cp3") and int(py[3:]) <= minor
    return abi == tag(python)


def wheel_hashes(name: str, version: str, python: str) -> list[str]:
    """sha256 of every wheel on PyPI of name==version that can run on this CPython."""
    digests = [
        str(file["hashes"]["sha256"])
        for file in pypi_files(name)
        if str(file["filename"]).endswith(".whl")
        and wheel_name_version(str(file["filename"])) == (name, version)
        and runs_on(str(file["filename"]), python)
    ]
    if not digests:
        sys.exit(f"bundle_server: PyPI has no wheel of {name}=={version} for CPython {python}")
    return sorted(digests)


def has_wheel(name: str, version: str, python: str, target: str) -> bool:
    """Whether PyPI has a wheel of name==version for this CPython version on this target."""
    for file in pypi_files(name):
        filename = str(file["filename"])
        if filename.endswith(".whl") and wheel_name_version(filename) == (name, version):
            platforms = wheel_tags(filename)[2].split(".")
            fits = "any" in platforms or any(p in TARGETS[target] for p in platforms)
            if fits and runs_on(filename, python):
                return True
    return False


def locked(python: str, target: str) -> list[tuple[str, str, list[str]]]:
    """(name, version, sha256 hashes) of each package the lock of this CPython version
    pins for this target (a package whose marker does not hold there is left out)."""
    entries = []
    text = (LOCKS / f"{tag(python)}.txt").read_text(encoding="utf-8")
    for block in re.split(r"\n(?=\S)", text):
        if not block.strip() or block.startswith("#"):
            continue
        requirement, _, marker = block.split("\\", 1)[0].partition(";")
        name, _, version = requirement.strip().partition("==")
        if marker.strip() and not marker_holds(marker.strip(), python, target):
            continue
        entries.append((normalize(name), version, re.findall(r"--hash=sha256:(\w+)", block)))
    return entries


def download(target: str) -> dict[str, list[Path]]:
    """The locked wheels of every CPython version for the target (from the cache if there)."""
    wheels: dict[str, list[Path]] = {}

    def one(python: str) -> tuple[str, list[Path]]:
        entries = locked(python, target)
        dest = CACHE / target / tag(python)
        dest.mkdir(parents=True, exist_ok=True)
        # pip would evaluate the lock's markers for this machine: hand it this target's pins.
        with tempfile.TemporaryDirectory() as scratch:
            requirements = Path(scratch) / "requirements.txt"
            requirements.write_text(
                "".join(
                    f"{name}=={version} {' '.join(f'--hash=sha256:{h}' for h in hashes)}\n"
                    for name, version, hashes in entries
                ),
                encoding="utf-8",
            )
            pip_download(
                python, target, dest, ["--no-deps", "--require-hashes", "-r", str(requirements)]
            )
        pins = {(name, version) for name, version, _ in entries}
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
            if parts[0] in LEFT_OUT.get(wheel_name_version(wheel.name)[0], ()):
                continue
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, target.open("wb") as out:
                shutil.copyfileobj(source, out)
            mode = member.external_attr >> 16
            if mode & 0o111:
                target.chmod(0o755)


def shared_folder(tags: list[str]) -> str:
    """The folder of a wheel several versions share: common, cp311-cp314, or cp310+cp312."""
    every = [tag(python) for python in PYTHONS]
    if tags == every:
        return "common"
    if len(tags) > 1 and every[every.index(tags[0]) : every.index(tags[0]) + len(tags)] == tags:
        return f"{tags[0]}-{tags[-1]}"
    return "+".join(tags)


def oldest_abi3(wheels: dict[str, list[Path]]) -> dict[str, list[Path]]:
    """The wheels, with each abi3 release taken in its build for the oldest CPython: an abi3
    wheel runs on every later one, so one copy serves every version (cryptography ships
    cp39-abi3 and cp311-abi3, which pip picks for 3.10 and for 3.11+). Each lock has the
    hashes of both (wheel_hashes), and pip checked this one against the oldest version's."""

    def oldest_python(path: Path) -> int:
        return min(int(python[3:]) for python in wheel_tags(path.name)[0].split("."))

    oldest: dict[tuple[str, str], Path] = {}
    for paths in wheels.values():
        for path in paths:
            key = wheel_name_version(path.name)
            if wheel_tags(path.name)[1] == "abi3" and (
                key not in oldest or oldest_python(path) < oldest_python(oldest[key])
            ):
                oldest[key] = path
    return {
        python: [oldest.get(wheel_name_version(path.name), path) for path in paths]
        for python, paths in wheels.items()
    }


def build(target: str, libs: Path = LIBS) -> None:
    """Fill bundled/libs (or `libs`) for the target: memory_ls and the locked wheels, unpacked."""
    version = package_version()
    if extension_version() != version:
        sys.exit(
            f"bundle_server: package.json says {extension_version()} and memory_ls "
            f"{version}; they must be the same version"
        )
    wheels = oldest_abi3(download(target))
    # Each wheel is unpacked once: a wheel that runs on every version (pure Python or
    # abi3) into the folder of the versions that use it, common/ when all do (a newer
    # release that dropped 3.10 goes into cp311-cp314/); any other into cpXY/.
    users: dict[str, list[str]] = {}
    where: dict[str, Path] = {}
    for python, paths in wheels.items():
        for path in paths:
            users.setdefault(path.name, []).append(tag(python))
            where.setdefault(path.name, path)
    if libs.exists():
        shutil.rmtree(libs)
    search: dict[str, set[str]] = {tag(python): {tag(python)} for python in PYTHONS}
    for name, tags in sorted(users.items()):
        if wheel_tags(name)[1] in {"none", "abi3"}:
            unpack(where[name], libs / shared_folder(tags))
            for user in tags:
                search[user].add(shared_folder(tags))
        else:
            for user in tags:
                unpack(where[name], libs / user)
    common = libs / "common"
    shutil.copytree(
        ROOT / "server" / "memory_ls",
        common / "memory_ls",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    packages = {
        tag(python): dict(wheel_name_version(path.name) for path in paths)
        for python, paths in wheels.items()
    }
    # The launcher's search path for each version: its own folder first, common/ last.
    search_paths = {
        version: sorted(folders | {"common"}, key=lambda f: (f == "common", f != version, f))
        for version, folders in search.items()
    }
    manifest = {
        "version": version,
        "target": target,
        "pythons": [tag(python) for python in PYTHONS],
        "native": list(NATIVE),
        "paths": search_paths,
        "packages": packages,
    }
    (libs / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    size = sum(path.stat().st_size for path in libs.rglob("*") if path.is_file())
    print(
        f"bundled memory-ls {version} for {target}, CPython {', '.join(PYTHONS)}: "
        f"{size / 1e6:.1f} MB in {libs}"
    )


def main() -> None:
    """Parse the command line and run `build` or `lock`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="fill client-vscode/bundled/libs")
    build_parser.add_argument("--target", choices=sorted(TARGETS), help="default: this machine")
    build_parser.add_argument(
        "--out", type=Path, default=LIBS, help="another folder than bundled/libs (tests)"
    )
    commands.add_parser("lock", help="write the lock files again from pyproject.toml")
    args = parser.parse_args()
    if args.command == "lock":
        lock()
    else:
        build(args.target or host_target(), args.out.resolve())


if __name__ == "__main__":
    main()
