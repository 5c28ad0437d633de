"""docs/trust.md's mutation table from a mutmut run: per module the mutants, killed,
survived and equivalent ones, then every survivor, equivalent (with the reason) or open.

    make mutation ARGS='"pis_env.scoring.*"'     # mutmut's run, results in mutants/
    python scripts/mutation_table.py              # the table, from `mutmut results --all`

Equivalent mutants (a change no input can tell from the original) are listed with their
reason in ``scripts/mutation_equivalents.yaml``; an entry that names no mutant of the run
is reported, so the list cannot go stale silently.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "scripts" / "mutation_equivalents.yaml"
#: ``agents.tournament.stats.x_mean_ci__mutmut_4: survived``
LINE = re.compile(r"^\s*([\w.]+)\.x[ǁ_]?(.+?)__mutmut_(\d+): (.+)$")
#: A mutant whose tests crash (a segfault) was caught as surely as one they fail.
KILLED = {"killed", "timeout", "caught by type check", "segfault"}


def parse(text: str) -> dict[str, tuple[str, str]]:
    """mutant name -> (module, status)."""
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            name = line.split(":")[0].strip()
            out[name] = (m.group(1), m.group(4).strip())
    return out


def table(results: dict[str, tuple[str, str]], equivalent: dict[str, str]) -> str:
    counts: dict[str, Counter] = defaultdict(Counter)
    survivors: dict[str, list[str]] = defaultdict(list)
    for name, (module, status) in sorted(results.items()):
        c = counts[module]
        c["mutants"] += 1
        # a mutant no input tells apart that still ran out of time (its tests slowed
        # by mutmut's trampolines) was not caught: it is equivalent
        timed_out = status == "timeout"
        if status in KILLED and not (timed_out and name in equivalent):
            c["killed"] += 1
        elif name in equivalent:
            c["equivalent"] += 1
            how = " (timed out)" if timed_out else ""
            survivors[module].append(f"- `{name}`: equivalent{how}: {equivalent[name]}")
        else:
            c["survived"] += 1
            survivors[module].append(f"- `{name}`: open ({status})")
    rows = ["| module | mutants | killed | survived | equivalent | killed of the rest |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for module, c in sorted(counts.items()):
        rest = c["mutants"] - c["equivalent"]
        share = f"{100 * c['killed'] / rest:.0f}%" if rest else "n/a"
        rows.append(f"| `{module}` | {c['mutants']} | {c['killed']} | {c['survived']} | "
                    f"{c['equivalent']} | {share} |")
    lines = rows + [""]
    for module in sorted(survivors):
        lines += [f"`{module}`:", "", *survivors[module], ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/mutation_table.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", help="a saved `mutmut results --all true` output "
                        "(default: run it here)")
    args = parser.parse_args(argv)
    if args.results:
        text = Path(args.results).read_text(encoding="utf-8")
    else:
        text = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"],
                              capture_output=True, text=True, check=True).stdout
    results = parse(text)
    if not results:
        parser.error("no mutmut results: run `make mutation` first")
    equivalent = yaml.safe_load(EQUIVALENTS.read_text(encoding="utf-8")) or {}
    print(table(results, equivalent))
    stale = sorted(set(equivalent) - set(results))
    modules = {module for module, _ in results.values()}
    stale = [s for s in stale if s.rsplit(".x", 1)[0] in modules]
    if stale:
        print("equivalents that name no mutant of this run: " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
