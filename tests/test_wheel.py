"""The built wheel carries sql/: install it into a fresh venv and run ingest + sql.

Editable installs read sql/ from the checkout and would hide a wheel without it.
"""
from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile

from tests.conftest import REPO, episode


def test_built_wheel_runs_ingest_and_sql(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
                   check=True, capture_output=True)
    [wheel] = dist.glob("tracelab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tracelab/sql/store/schema/tables.sql" in names
    assert "tracelab/sql/store/views/transcript.sql" in names
    assert "tracelab/py.typed" in names  # type checkers read the library's annotations (PEP 561)
    assert not [name for name in names if name.endswith("ruff.toml")]  # lint configuration, not code

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    site = next((env_dir / "lib").glob("python*/site-packages"))
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True)
    # dependencies come from this interpreter's environment (no network); tracelab only from the wheel
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (site / "zz_deps.pth").write_text("\n".join(d for d in deps if d != str(site)) + "\n")
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(episode("w1", {"kind": "tool_call", "name": "send"})) + "\n")
    workdir = tmp_path / "run"
    workdir.mkdir()

    def tracelab(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(env_dir / "bin" / "tracelab"), *args], cwd=workdir, capture_output=True,
                              text=True)

    located = subprocess.run([str(python), "-c", "import tracelab, sys; print(tracelab.__file__)"],
                             cwd=workdir, capture_output=True, text=True)
    assert located.stdout.startswith(str(site)), located.stdout + located.stderr
    ingested = tracelab("ingest", str(traces), "--quiet")
    assert ingested.returncode == 0, ingested.stderr
    queried = tracelab("sql", "SELECT tool_name, status FROM tool_calls", "--format", "csv")
    assert queried.returncode == 0, queried.stderr
    assert queried.stdout == "tool_name,status\nsend,missing\n"
