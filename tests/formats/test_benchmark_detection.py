"""The benchmark adapters claim their own sample files and no other format's."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracelab.formats import agentdojo, openhands, swe_agent, tau_bench
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
OWN_FOLDERS = {tau_bench: "tau-bench", agentdojo: "agentdojo", swe_agent: "swe-agent",
               openhands: "openhands"}
ALL_SAMPLES = sorted(p for p in SAMPLES.rglob("*") if p.is_file())


@pytest.mark.parametrize("module", list(OWN_FOLDERS), ids=lambda m: m.name)
def test_claims_exactly_the_samples_of_its_folder(module) -> None:
    folder = OWN_FOLDERS[module]
    claimed = [p.relative_to(SAMPLES).as_posix() for p in ALL_SAMPLES if module.claims(Source(p))]
    own = [p.relative_to(SAMPLES).as_posix() for p in ALL_SAMPLES
           if p.relative_to(SAMPLES).parts[0] == folder]
    assert own, f"no sample files under sample_traces/{folder}"
    assert claimed == own


@pytest.mark.parametrize("module", list(OWN_FOLDERS), ids=lambda m: m.name)
def test_auto_detection_picks_the_benchmark_format_for_its_samples(module) -> None:
    own = [p for p in ALL_SAMPLES if p.relative_to(SAMPLES).parts[0] == OWN_FOLDERS[module]]
    assert {detect_format(Source(p)).name for p in own} == {module.name}
