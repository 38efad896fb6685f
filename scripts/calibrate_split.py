#!/usr/bin/env python3
"""Back-solve one split fraction of a template so a derived figure hits a target.

    scripts/calibrate_split.py templates/h100.yaml core power core.frequency_ghz 1.83

Bisects the fraction (the template's split line `name: {area: A, power: P, ...}`) on a temporary
copy, running `pathfinder arch --format json`, and prints the smallest fraction that reaches the
target. It is how the shipped templates' splits were calibrated to their datasheets; it edits
nothing itself.
"""
import json, os, re, subprocess, sys, tempfile

def run(exe, text, techlib):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        out = subprocess.run([exe, "arch", path, "--format", "json", "--techlib", techlib],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    finally:
        os.unlink(path)

def field(j, dotted):
    for part in dotted.split("."):
        if isinstance(j, list):
            j = next(e for e in j if part in (e.get("name"), e.get("tier")))
        else:
            j = j[part]
    return j

def main():
    tmpl, comp, which, path, target = sys.argv[1:6]
    target = float(target)
    root = os.path.dirname(os.path.abspath(__file__)) + "/.."
    exe = os.environ.get("PATHFINDER", root + "/build/pathfinder")
    techlib = root + "/techlib"
    text = open(tmpl).read()
    pat = re.compile(r"(\n\s+%s: \{[^}]*%s: )([0-9.]+)" % (re.escape(comp), which))
    def value_at(x):
        return field(run(exe, pat.sub(lambda m: m.group(1) + "%.6f" % x, text), techlib), path)
    split = text[text.index("\nsplit:"):]
    others = [float(m.group(2)) for m in re.finditer(r"\n\s+(\w+): \{[^}]*%s: ([0-9.]+)" % which, split)
              if m.group(1) != comp]
    lo, hi = 0.0, 1.0 - sum(others)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if value_at(mid) >= target: hi = mid
        else: lo = mid
    print("%s.%s = %.5f -> %s = %s" % (comp, which, hi, path, value_at(hi)))

if __name__ == "__main__":
    main()
