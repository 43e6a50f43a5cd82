#!/usr/bin/python3
"""python/opbench_results.py and `compare --format csv` on a real small run
(loader.toml, naive): pd.read_csv gives one table with numeric columns and
one row per entry and set; a skipped entry's status is in `status`, never in
a number column; the loader's median_s equals compare's for every entry; the
loader reads result sets, compare JSON (with dtype, params and variant) and
archives, with and without pandas; a set in the older `sample_times` form
gives the same verdicts as the compact one. Skipped (exit 77) without
Debian's python3-pandas (scripts/install-deps.sh --test).

usage: opbench_results_test.py OPBENCH SUITE WORKDIR PYTHON_DIR
"""
import copy
import importlib
import json
import math
import os
import shutil
import subprocess
import sys

SKIP = 77


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=240)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def to_old_form(result_set):
    """The set as opbench wrote it before the histogram: stats.sample_times."""
    old = copy.deepcopy(result_set)
    for e in old["benchmarks"]:
        st = e.get("stats")
        if isinstance(st, dict) and "sample_histogram" in st:
            st["sample_times"] = obr.samples(st)
            del st["sample_histogram"]
    return old


def docstring_pivot():
    """The naive-vs-onednn pivot the loader's docstring shows, as code."""
    doc = obr.__doc__
    start = doc.index("    ok = df[df.status")
    return "\n".join(line[4:] for line in doc[start:doc.index("\n\n", start)].splitlines())


def check_filter_columns(df, la, sa):
    """Issue 30: case never empty, key pairs backends, threads are the
    threads used, spread_pct is spread in percent, quality on every timed row;
    the docstring's pivot runs on the loaded run."""
    check(df.case.notna().all() and (df.case != "").all(), "case is never empty")
    unnamed = df[df.op == "add"]
    check((unnamed.case == "add").all(), "an unnamed case's case is its op")
    check(df.key.notna().all() and not df.key.str.contains("be:").any(), "key has no backend")
    per_key = df[df.set == "a"].groupby("key").backend.nunique()
    check((per_key == df[df.set == "a"].backend.nunique()).all(),
          f"every key has one row per backend ({len(per_key)} keys)")
    resolved = {e["settings"].get("threads_resolved") for e in sa["benchmarks"] if "settings" in e}
    ok = df[df.status == "ok"]
    check((ok.threads >= 1).all() and set(ok.threads) <= resolved,
          f"threads are settings.threads_resolved ({sorted(set(ok.threads))})")
    # An entry left with one repetition (the others starved, on a busy
    # machine) has no spread: both columns empty.
    spread = ok[ok.spread.notna() | ok.spread_pct.notna()]
    off = spread[~((spread.spread_pct - 100 * spread.spread).abs()
                   <= 1e-9 * spread.spread_pct.abs().clip(lower=1e-300))]
    check(off.empty, f"spread_pct is spread x 100 ({len(spread)} rows with a spread; off: "
          f"{off[['name', 'spread', 'spread_pct']].to_dict('records')})")
    check(ok.quality.notna().all() and set(ok.quality) <= {"clean", "noisy", "disturbed", "starved"},
          f"every timed row has its quality ({sorted(set(ok.quality))})")
    if "onednn" not in set(la[la.status == "ok"].backend):
        print("note: onednn did not run here (not built): the docstring's pivot is not run")
        return
    env = {"df": la, "print": lambda *a: None}
    exec(docstring_pivot(), env)
    pair = env["pair"]
    # A speedup for every key timed on both (on a busy machine one side of a
    # key may have starved, with no time).
    ok_la = la[la.status == "ok"]
    both = set(ok_la[ok_la.backend == "naive"].key) & set(ok_la[ok_la.backend == "onednn"].key)
    check(len(pair.dropna()) == len(both) and (pair.speedup.dropna() > 0).all(),
          f"the docstring's naive-vs-onednn pivot gives a speedup per case timed on both ({len(pair)})")


def main():
    global obr
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    opbench, suite, work, pydir = sys.argv[1:]
    try:
        import pandas as pd
    except ImportError:
        print("SKIP: python3-pandas is not installed (scripts/install-deps.sh --test)")
        return SKIP
    sys.path.insert(0, pydir)
    obr = importlib.import_module("opbench_results")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    a, b = os.path.join(work, "a.json"), os.path.join(work, "b.json")
    for out in (a, b):
        run(opbench, "run", suite, "--out", out)
    sa = json.load(open(a))
    entries = {e["run_name"] for e in sa["benchmarks"] if e.get("run_type") == "iteration" and "op" in e}
    check(len(entries) >= 6, f"the run has its entries ({len(entries)})")

    # compare's CSV: one tidy table.
    csv = os.path.join(work, "ab.csv")
    run(opbench, "compare", a, b, "--format", "csv", "-o", csv)
    df = pd.read_csv(csv)
    check(len(df) == 2 * len(entries), f"one row per entry and set ({len(df)} rows for {len(entries)} entries x 2)")
    for col in ("median_s", "flop_per_s", "byte_per_s", "ratio", "p_value", "ratio_ci95_low", "param_M"):
        check(pd.api.types.is_numeric_dtype(df[col]), f"column {col} is numeric ({df[col].dtype})")
    for col in ("op", "backend", "dtype", "variant", "status", "verdict"):
        check(col in df.columns, f"column {col}")
    ok = df[df.status == "ok"]
    # Every entry that runs is timed on a quiet machine; on a busy one some starve (no time).
    check(len(ok) >= 1 and (ok.median_s > 0).all(), "every timed entry has a positive median_s")
    check(set(df.status) <= {"ok", "starved", "skipped"}, f"no entry failed ({set(df.status)})")
    check(df[df.status != "ok"].median_s.isna().all(), "entries without a time leave median_s empty")
    check(set(df[df.set == "a"].verdict) == {"base"}, "the base set's rows say verdict 'base'")
    # Timed in both sets: a ratio (an entry starved in a has none in b's row).
    timed_a = set(df[(df.set == "a") & (df.status == "ok")].name)
    timed_b = df[(df.set == "b") & (df.status == "ok") & df.name.isin(timed_a)]
    with_ci = timed_b[timed_b.ratio_ci95_low.notna()]  # 6 or more repetitions met the noise target on both sides
    # An interval needs repetitions that met their noise target on both sides,
    # which a busy machine may leave none of: each interval there is checked.
    if len(with_ci) == 0:
        print("note: no entry has a 95% interval here (noise targets missed on a busy machine)")
    check(timed_b.ratio.notna().all() and (with_ci.ratio_ci95_low <= with_ci.ratio).all()
          and (with_ci.ratio <= with_ci.ratio_ci95_high).all(),
          f"each entry timed in both sets has a ratio ({len(timed_b)}), in its 95% interval ({len(with_ci)})")

    # A skipped entry: its status in `status`, nothing in the numbers.
    skipped_set = copy.deepcopy(sa)
    for e in skipped_set["benchmarks"]:
        if e.get("op") == "add" and e.get("backend") == "naive":
            e.update({"status": "skipped", "reason": "made skipped by the test", "error_occurred": True})
            e.pop("stats", None)
    c = os.path.join(work, "c.json")
    json.dump(skipped_set, open(c, "w"))
    csv2 = os.path.join(work, "ac.csv")
    run(opbench, "compare", a, c, "--format", "csv", "-o", csv2)
    d2 = pd.read_csv(csv2)
    sk = d2[(d2.set == "c") & (d2.op == "add") & (d2.backend == "naive")]
    check(len(sk) == 1 and sk.status.iloc[0] == "skipped" and sk.reason.iloc[0] == "made skipped by the test",
          "a skipped entry says so in status and reason")
    check(sk[["median_s", "flop_per_s", "ratio"]].isna().all(axis=None), "and leaves every number column empty")
    check(pd.api.types.is_numeric_dtype(d2.median_s), "median_s stays numeric with a skipped row")

    # The loader agrees with compare, entry by entry.
    la = obr.load(a)
    check(isinstance(la, pd.DataFrame) and len(la) == len(entries), "load(result set) gives a DataFrame per entry")
    mine = {(r.name, r.status): r.median_s for r in la.itertuples()}
    theirs = {(r.name, r.status): r.median_s for r in df[df.set == "a"].itertuples()}
    check(mine.keys() == theirs.keys(), "loader and CSV list the same entries and statuses")
    check(all((math.isnan(v) and math.isnan(theirs[k])) or math.isclose(v, theirs[k], rel_tol=1e-12)
              for k, v in mine.items()), "loader's median_s equals compare's for every entry")
    check(pd.api.types.is_numeric_dtype(la.median_s) and "param_M" in la.columns, "loader columns are numeric")

    # The metrics table (harness/measure/entry_metrics.hpp): the run stores it
    # in each passed entry, compare's CSV computes it from the reader, and the
    # loader reads the stored one; a set without it is computed alike.
    metric_cols = obr._METRIC_COLUMNS
    with_pct = [c for m in metric_cols for c in ([m, "spread_pct"] if m == "spread" else [m])]
    check(list(df.columns[df.columns.get_loc("remeasured") + 1:][:len(with_pct)]) == with_pct,
          "the CSV's metric columns are the loader's, in order, spread_pct after spread")
    check(list(la.columns[la.columns.get_loc("remeasured") + 1:][:len(with_pct)]) == with_pct,
          "and the loader's columns are in that order too")
    # Per-case fields live on each case's first iteration entry (results/README.md).
    firsts = {}
    for e in sa["benchmarks"]:
        if e.get("run_type") == "iteration":
            firsts.setdefault(e["run_name"], e)
    check(all("metrics" in e for e in firsts.values() if e.get("status") == "passed"),
          "every passed case stores its metrics on its first entry")
    stripped = os.path.join(work, "a_no_metrics.json")
    json.dump({**sa, "benchmarks": [{k: v for k, v in e.items() if k != "metrics"} for e in sa["benchmarks"]]},
              open(stripped, "w"))
    ln = obr.load(stripped)
    # A metric added to the table (one field, one row) reaches the loader
    # from the stored object alone: no list in the loader to extend.
    added = os.path.join(work, "a_added_metric.json")
    json.dump({**sa, "benchmarks": [{**e, "metrics": {**e["metrics"], "added_metric_s": 1.5}} if "metrics" in e else e
                                    for e in sa["benchmarks"]]}, open(added, "w"))
    la2 = obr.load(added)
    ok2 = la2[la2.status == "ok"]
    check("added_metric_s" in la2.columns and len(ok2) > 0 and (ok2.added_metric_s == 1.5).all(),
          "a stored metric the loader does not list becomes a column of its own")
    csv_a = df[df.set == "a"].reset_index(drop=True)
    for col in ["case", "key", "threads", "quality"]:
        check(all((pd.isna(x) and pd.isna(y)) or x == y for x, y in zip(la[col], csv_a[col])),
              f"{col}: the loader's equals compare's CSV for every entry")
    for col in metric_cols + ["spread_pct"]:
        for frame, what in ((la, "stored"), (ln, "computed")):
            same = all((pd.isna(x) and pd.isna(y)) or math.isclose(float(x), float(y), rel_tol=1e-9)
                       for x, y in zip(frame[col], csv_a[col]))
            check(same, f"{col}: the loader's ({what}) equals compare's CSV for every entry")

    check_filter_columns(df, la, sa)

    # compare JSON: dtype, params and variant as fields; the loader reads it.
    cj = os.path.join(work, "ab.json")
    run(opbench, "compare", a, b, "--format", "json", "-o", cj)
    cases = json.load(open(cj))["comparisons"][0]["cases"]
    check(all({"dtype", "params", "variant"} <= c.keys() for c in cases), "compare JSON has dtype, params, variant")
    lc = obr.load(cj)
    check(len(lc) == len(cases) and "param_M" in lc.columns and "ratio_ci95_low" in lc.columns,
          "load(compare JSON) gives a row per case")

    # An archive: every set.
    arc = os.path.join(work, "archive")
    run(opbench, "archive", arc, a, b)
    check(len(obr.load(arc)) == 2 * len(entries), "load(archive) gives every set's entries")

    # Without pandas: a list of dicts with the same rows.
    sys.modules["pandas"] = None
    rows = obr.load(a)
    del sys.modules["pandas"]
    check(isinstance(rows, list) and len(rows) == len(entries) and rows[0]["median_s"] == la.median_s.iloc[0],
          "without pandas, load() gives the same rows as dicts")

    # Older sets (sample_times) read the same, with the same verdicts.
    a_old, b_old = os.path.join(work, "a_old.json"), os.path.join(work, "b_old.json")
    json.dump(to_old_form(sa), open(a_old, "w"))
    json.dump(to_old_form(json.load(open(b))), open(b_old, "w"))
    old_csv = os.path.join(work, "ab_old.csv")
    run(opbench, "compare", a_old, b_old, "--format", "csv", "-o", old_csv)
    dold = pd.read_csv(old_csv)
    check(list(dold.verdict) == list(df.verdict) and list(dold.test) == list(df.test),
          "a set in the older sample_times form gives the same verdicts and tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
