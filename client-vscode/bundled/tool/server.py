"""Start the memory-ls language server the VSIX carries: `python -I server.py [--check] [FLAGS]`;
`python -I server.py --cli ARGS` runs its command line (`memory-ls ARGS`) instead.

The libraries are in ../libs (see client-vscode/scripts/bundle_server.py): `common/` for
every supported CPython, `cpXY/` for one version, `cpXY-cpZW/` for a few; the folders
bundle.json lists for this version go first on sys.path (their .pth files are read, as
site-packages' are), so the interpreter needs nothing installed: the language server and
`--cli mcp` run on the standard library alone. An interpreter the bundle has no libraries for
exits with UNSUPPORTED and a JSON description of itself on stdout; `--check` imports
the server and the native modules, prints the same description with the server's
version and exits 0.
"""

# Runs on whatever interpreter the user has: no syntax newer than Python 3.6 before
# the version check, so that an old one gets the message rather than a SyntaxError.
import json
import os
import platform
import sys
import sysconfig

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
UNSUPPORTED = 3


def describe() -> "dict[str, object]":
    """This interpreter, for the extension's messages and log."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    }


def read_path_files(folders: "list[str]") -> None:
    """Read the folders' .pth files as site-packages' are read (pywin32's puts its win32
    folders on the path and readies its DLLs); what they add goes right after them."""
    if not any(name.endswith(".pth") for folder in folders for name in os.listdir(folder)):
        return
    import site

    before = list(sys.path)
    for folder in folders:
        site.addsitedir(folder)
    added = [entry for entry in sys.path if entry not in before]
    sys.path[:] = before[: len(folders)] + added + before[len(folders) :]


def main(argv: "list[str]") -> int:
    """Check the interpreter, put the bundled libraries on the path and run the server."""
    with open(os.path.join(LIBS, "bundle.json"), encoding="utf-8") as file:
        bundle = json.load(file)
    info = describe()
    tag = "cp" + str(sys.version_info[0]) + str(sys.version_info[1])
    if info["implementation"] != "CPython" or info["free_threaded"] or tag not in bundle["pythons"]:
        info["supported"] = bundle["pythons"]
        print(json.dumps(info))
        return UNSUPPORTED
    folders = [os.path.join(LIBS, folder) for folder in bundle["paths"][tag]]
    sys.path[0:0] = folders
    read_path_files(folders)
    if argv[:1] == ["--check"]:
        import importlib

        import memory_ls
        import memory_ls.lsp.app

        for module in bundle["native"]:
            importlib.import_module(module)
        info["memory_ls"] = memory_ls.__version__
        info["target"] = bundle["target"]
        print(json.dumps(info))
        return 0
    from memory_ls.cli import main as cli_main

    # `--cli ARGS`: the command line (`memory-ls ARGS`: the terminal's launcher, `mcp`).
    cli_main(argv[1:] if argv[:1] == ["--cli"] else ["serve", *argv])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
