"""Pathfinder from Python, notebook style: one evaluation, a strategy ranking, a what-if and a
small study as a table. Run from the repository root after the build:

    PYTHONPATH=build/python python3 examples/python/explore.py
"""
import os

import pathfinder as pf

A100 = "templates/a100.yaml"
GPT3_13B = "studies/workloads/gpt3_13b.yaml"

# One iteration of GPT-3 13B on 64 A100s, tp8 inside the node, data parallel across.
r = pf.evaluate(A100, GPT3_13B, strategy="tp8-pp1-dp8-mb1", devices=64)
print(f"{r['strategy']}: {r['iteration_s']:.2f} s per iteration, MFU {100 * r['mfu']:.1f}%")

# Which strategy is best on those 64 GPUs, and by how much?
ranking = pf.rank(A100, GPT3_13B, 64, top=5)
for i, s in enumerate(ranking["top"], 1):
    print(f"{i}. {s['strategy']:<28} {s['iteration_s']:.2f} s")

# What would a 300 W power cap do to the best one?
best = ranking["top"][0]["strategy"]
capped = pf.evaluate(A100, GPT3_13B, strategy=best, devices=64, set=["budget.power=300W"])
print(f"at 300 W: {capped['iteration_s']:.2f} s per iteration")

# A small sweep as a table (a pandas DataFrame when pandas is installed).
out = os.environ.get("PATHFINDER_EXAMPLE_OUT", "results/python-example")
study = pf.study("tests/data/studies/study_small.yaml", out=out)
rows = pf.frame(study)
if hasattr(rows, "to_string"):  # pandas
    print(rows[["logic", "memory", "iteration_s", "mfu"]].to_string(index=False))
else:
    for row in rows:
        print(row["logic"], row["memory"], row["iteration_s"], row["mfu"])
