"""The pathfinder Python module (engine/python/): each function answers as its command does.

Run by CTest with PYTHONPATH=build/python from the repository root (tests/CMakeLists.txt).
"""
import json
import os
import subprocess
import sys
import threading

import pytest

import pathfinder as pf

ROOT = os.environ.get("PATHFINDER_SOURCE", os.getcwd())
EXE = os.environ.get("PATHFINDER_EXE", "")
A100 = os.path.join(ROOT, "templates/a100.yaml")
GPT13 = os.path.join(ROOT, "studies/workloads/gpt3_1.3b.yaml")


def cli_json(*args):
    """The command line's JSON for the same question."""
    out = subprocess.run([EXE, *args, "--format", "json"], check=True, capture_output=True,
                         text=True, cwd=ROOT).stdout
    return json.loads(out)


def test_version_is_the_command_lines():
    assert pf.__version__.startswith("0.12.0")
    out = subprocess.run([EXE, "--version"], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "pathfinder " + pf.__version__


def test_arch_is_the_commands_json():
    a = pf.arch(A100)
    # 108 SMs x 4 tensor cores x 512 FLOP/cycle x 1.41 GHz = 311.87 TFLOP/s
    assert a["core"]["peak_tflops"] == pytest.approx(311.9, abs=0.5)
    cli = cli_json("arch", A100)
    assert a["core"] == cli["core"]
    assert a["inputs"]["pathfinder"] == pf.__version__
    n5 = pf.arch(A100, tech="N5")
    assert n5["logic"] == "N5"


def test_evaluate_matches_eval_and_takes_sets():
    r = pf.evaluate(A100, GPT13, strategy="tp2-pp2-dp2-mb4", devices=8)
    cli = cli_json("eval", A100, "--workload", GPT13, "--strategy", "tp2-pp2-dp2-mb4",
                   "--devices", "8")
    assert r["feasible"] is True
    assert r["iteration_s"] == cli["iteration_s"]  # the same evaluation, bit for bit
    assert r["strategy"] == "tp2-pp2-dp2-mb4-1f1b"
    # A workload key: half the global batch, 32 micro-batches instead of 64.
    half = pf.evaluate(A100, GPT13, strategy="tp2-pp2-dp2-mb4", devices=8,
                       set=["global_batch=256"])
    assert half["micro_batches_per_pipeline"] == 32
    assert half["iteration_s"] < r["iteration_s"]


def test_evaluate_takes_the_scale_out_nic_as_the_command_line_does():
    # 64 A100s (8 DGX) on HDR200 (a100.yaml) and on XDR800 (100 GB/s per GPU, techlib): the
    # data-parallel reduction crosses the network, so the faster NIC is faster.
    args = dict(strategy="tp8-pp1-dp8-mb4", devices=64)
    hdr = pf.evaluate(A100, GPT13, **args)
    xdr = pf.evaluate(A100, GPT13, nic="XDR800", **args)
    cli = cli_json("eval", A100, "--workload", GPT13, "--strategy", "tp8-pp1-dp8-mb4",
                   "--devices", "64", "--nic", "XDR800")
    assert xdr["iteration_s"] == cli["iteration_s"]
    assert xdr["iteration_s"] < hdr["iteration_s"]
    with pytest.raises(pf.ConfigError, match="unknown scale-out NIC"):
        pf.evaluate(A100, GPT13, nic="NDR4", **args)


def test_rank_orders_strategies_and_frames_them():
    r = pf.rank(A100, GPT13, 8, top=3)
    top = r["top"]
    assert len(top) == 3
    times = [t["iteration_s"] for t in top]
    assert times == sorted(times)
    assert r["ranked_by"] == "time"
    # pandas (Debian's python3-pandas, installed by scripts/setup.sh): a DataFrame a row each.
    import pandas
    df = pf.frame(r)
    assert isinstance(df, pandas.DataFrame)
    assert list(df["strategy"]) == [t["strategy"] for t in top]


def test_bad_input_raises_config_error_with_the_located_line(tmp_path):
    bad = tmp_path / "w.yaml"
    bad.write_text("name: x\nkind: gpt\nlayers: -3\n")
    with pytest.raises(pf.ConfigError) as e:
        pf.evaluate(A100, str(bad))
    assert str(e.value).startswith(str(bad) + ":3:9: error: layers: expected a positive number")
    assert isinstance(e.value, ValueError)
    # validate lists every problem instead of raising: the keys the file lacks (at its map,
    # line 1) and the bad layer count at line 3.
    v = pf.validate(str(bad))
    assert v[0]["ok"] is False
    problems = {(p["line"], p["key"]) for p in v[0]["problems"]}
    assert (3, "layers") in problems
    assert (1, "hidden") in problems
    assert pf.validate(A100)[0]["ok"] is True
    with pytest.raises(pf.ConfigError, match="command line: error: devices: expected 0"):
        pf.evaluate(A100, GPT13, devices=-1)


def test_threads_evaluate_at_once_with_the_same_answers():
    # The GIL is released inside: four threads, each its own evaluation, the same numbers.
    want = pf.evaluate(A100, GPT13, strategy="tp2-pp2-dp2-mb4", devices=8)["iteration_s"]
    got = []
    def one():
        got.append(pf.evaluate(A100, GPT13, strategy="tp2-pp2-dp2-mb4", devices=8)["iteration_s"])
    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 4


def test_study_runs_and_frames_its_rows(tmp_path):
    out = tmp_path / "small"
    s = pf.study(os.path.join(ROOT, "tests/data/studies/study_small.yaml"), out=str(out), threads=1)
    assert s["complete"] is True
    assert s["points"] == 4
    assert os.path.exists(out / "report.html")
    df = pf.frame(s)
    assert len(df) == 4
    assert df["iteration_s"].min() == min(float(x) for x in df["iteration_s"])
    assert set(df["logic"]) == {"N7", "N5"}


def test_search_is_the_commands_answer():
    # The small test search (GPT-3 1.3B on 8 A100s, strategies searched, 2 restarts x 4 steps).
    f = os.path.join(ROOT, "tests/data/studies/small_search.yaml")
    r = pf.search(f, threads=1)
    cli = cli_json("search", f, "--threads", "1")
    assert r["strategy"] == cli["strategy"]
    assert r["iteration_s"] == cli["iteration_s"]
    assert r["inputs"]["devices"] == 8
    # Searched never slower than the template's own split.
    assert r["iteration_s"] <= r["template_split_iteration_s"] * (1 + 1e-12)


def test_example_runs(tmp_path):
    env = dict(os.environ, PATHFINDER_EXAMPLE_OUT=str(tmp_path / "example"))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples/python/explore.py")],
                         check=True, capture_output=True, text=True, cwd=ROOT, env=env).stdout
    assert "per iteration, MFU" in out
    assert out.count("\n") >= 10
