"""README.md tells the truth: its shell blocks and its Python snippet run as written.

The blocks run in order, from a folder holding the sample traces, with the installed
`tracelab` on PATH. Exit 0 and 1 are both results (1: a check found failing cases, as the
sample suite does on purpose); 2 or 3 would mean the README shows a wrong command.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def shell_commands(text: str = README) -> list[str]:
    """Each command of the sh blocks (continuation lines joined), `make` and venv lines left out."""
    commands: list[str] = []
    for block in blocks("sh", text):
        current = ""
        for line in block.splitlines():
            if not line.strip() or line.startswith(("make ", ". .venv")) or line.startswith("#"):
                continue
            if current and not line.startswith(("tracelab", "RUN_ID")):
                current += "\n" + line
                continue
            if current:
                commands.append(current)
            current = line
        if current:
            commands.append(current)
    return commands


def session_home(folder: Path) -> Path:
    """A home folder whose coding-agent sessions (`~/.claude/projects`, `~/.codex/sessions`,
    the default locations the README names) are copies of the sample sessions."""
    home = folder / "home"
    shutil.copytree(REPO / "sample_traces" / "claude-code", home / ".claude" / "projects")
    shutil.copytree(REPO / "sample_traces" / "codex", home / ".codex" / "sessions")
    return home


def readme_env(folder: Path) -> dict[str, str]:
    """The environment README commands run in: the installed `tracelab`, a sample home."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "HOME": str(session_home(folder))}
    env.pop("TRACELAB_STORE", None)
    return env


def test_readme_commands_run_as_written(tmp_path):
    os.symlink(REPO / "sample_traces", tmp_path / "sample_traces")
    env = readme_env(tmp_path)
    commands = shell_commands()
    assert any(c.startswith("tracelab check") for c in commands)
    script = "\n".join(f"{c}\necho \"__rc=$? :: {i}\"" for i, c in enumerate(commands))
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=600)

    codes = re.findall(r"__rc=(\d+) :: (\d+)", result.stdout)
    assert len(codes) == len(commands), result.stderr
    for code, index in codes:
        assert code in ("0", "1"), f"README command failed ({code}): {commands[int(index)]}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    assert (tmp_path / "report.xml").exists() and (tmp_path / "baseline.json").exists()


def test_readme_python_snippet_runs(tmp_path):
    os.symlink(REPO / "sample_traces", tmp_path / "sample_traces")
    [snippet] = blocks("python")
    result = subprocess.run([sys.executable, "-c", snippet + "\nprint(type(writes).__name__, writes.height)"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["DataFrame", "1"]
