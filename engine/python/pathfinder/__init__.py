"""Pathfinder from Python: the command line's answers as plain dicts.

Each function does what the command of the same name does with ``--format json`` and returns
its JSON as a dict; the work runs in the native module with the GIL released, so threads run
in parallel. Bad input raises :class:`ConfigError` (a ``ValueError``) whose message holds the
command's located lines (``file:line:col: error: key: ...``); an infeasible design is a result
with ``feasible`` False and a ``reason``. With pandas installed, :func:`frame` turns a ranking or
a study into a DataFrame.

    import pathfinder as pf
    r = pf.evaluate("templates/a100.yaml", "studies/workloads/gpt3_1.3b.yaml",
                    strategy="tp2-pp2-dp2-mb4", devices=8)
    print(r["iteration_s"], r["mfu"])
"""

import csv
import json

from . import _pathfinder as _native

ConfigError = _native.ConfigError
__version__ = _native.version()

__all__ = ["ConfigError", "validate", "arch", "evaluate", "rank", "search", "study", "frame"]


def _machine(tech, memory, network, techlib, software, set, nic=""):
    if isinstance(set, str):
        set = [set]
    return [tech or "", memory or "", network or "", techlib or "", software or "", list(set),
            nic or ""]


def validate(*paths, techlib=""):
    """Every problem of each file (any input kind): a list of {file, ok, problems}."""
    return json.loads(_native.validate([str(p) for p in paths], techlib or ""))


def arch(template, *, tech="", memory="", network="", techlib="", software="", set=(),
         nic=""):
    """The micro-architecture a template's budgets buy (``pathfinder arch``)."""
    return json.loads(_native.arch(str(template), *_machine(tech, memory, network, techlib,
                                                            software, set, nic)))


def evaluate(template, workload, *, strategy="", devices=0, tech="", memory="", network="",
             techlib="", software="", set=(), nic=""):
    """One training iteration (``pathfinder eval``): set holds KEY=VALUE strings; nic names a
    scale-out NIC of the technology library (as ``--nic``)."""
    return json.loads(_native.evaluate(str(template), str(workload), strategy or "",
                                       int(devices), *_machine(tech, memory, network, techlib,
                                                               software, set, nic)))


def rank(template, workload, devices, *, objective="time", top=5, tech="", memory="",
         network="", techlib="", software="", set=(), nic=""):
    """Every valid strategy on `devices` devices, ranked by `objective` (``pathfinder rank``)."""
    return json.loads(_native.rank(str(template), str(workload), int(devices), objective,
                                   int(top), *_machine(tech, memory, network, techlib,
                                                       software, set, nic)))


def search(search_file, *, restarts=0, steps=0, threads=0, objective=""):
    """The best budget split (and strategy) of a search file (``pathfinder search``); 0 for the
    file's restarts and steps, and all cores."""
    return json.loads(_native.search(str(search_file), int(restarts), int(steps), int(threads),
                                     objective or ""))


def study(study_file, out="", threads=0):
    """Runs (or resumes) a study into `out` (``pathfinder study``); the counts and files."""
    return json.loads(_native.study(str(study_file), str(out), int(threads)))


def frame(result):
    """A ranking's top strategies or a study's rows as a pandas DataFrame.

    Without pandas, the same rows as a list of dicts.
    """
    if "results_csv" in result:
        with open(result["results_csv"], newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    elif "top" in result:
        rows = result["top"]
    else:
        raise ValueError("expected the result of rank() or study()")
    try:
        import pandas
    except ImportError:
        return rows
    if "results_csv" in result:
        return pandas.read_csv(result["results_csv"])
    return pandas.json_normalize(rows)
