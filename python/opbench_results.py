#!/usr/bin/env python3
"""Load opbench results into one tidy table: a pandas DataFrame when pandas is
installed, else a list of dicts (the standard library only).

    import opbench_results as obr
    df = obr.load("results/quick.json")           # a result set (opbench run --out)
    df = obr.load("results/archive")              # every set of an archive (index.json)
    df = obr.load(["a.json", "b.json"])           # several sets, one frame
    cmp = obr.load("cmp.json")                    # opbench compare --format json

naive against onednn, one row per case (`key` is the entry without its
backend, so the two backends' rows of a case pair by it):

    ok = df[df.status == "ok"]
    pair = ok.pivot_table(index="key", columns="backend", values="median_s")
    pair["speedup"] = pair["naive"] / pair["onednn"]
    print(pair.dropna().sort_values("speedup"))

Result sets give one row per entry (case x backend) and set, with the same
columns, in the same units, as `opbench compare --format csv`: set, commit,
timestamp, machine_id, suite, name, case, op, backend, dtype, variant,
param_<name> for each shape parameter, threads, cache, status, reason, quality,
quality_reasons, starved_repetitions, starved_share, remeasured, median_s, spread, repetitions, repetitions_missed_noise_target, samples, flop, byte,
flop_per_s, byte_per_s, pct_peak_compute, pct_peak_bandwidth (results/README.md, "CSV": the
metrics table of harness/measure/entry_metrics.hpp; read from an entry's stored
`metrics` object where the set has one, whose every further key is a column too).
A compare JSON gives one row per case and pair of sets: base_set, new_set,
case, op, backend, dtype, variant, param_<name>, verdict, reason,
base_median_s, new_median_s, ratio, ratio_ci95_low, ratio_ci95_high, p_value,
test. Numbers without a value (a skipped entry's time) are None (NaN in
pandas); why is in `status` and `reason`.

median_s follows opbench's one summary per entry (harness/measure/entry_summary.hpp,
which every view reads): the median of every repetition's median but the
starved ones' (their threads waited for a CPU) and, unless every one was, the
throttled ones' (the GPU's clock had fallen), those that missed their noise
target included (they are counted in repetitions_missed_noise_target;
accept_unmet_noise is kept for old callers and changes nothing). An entry
whose every repetition was starved has status `starved` and no time. quality
is the run's stored summary's flag (None for sets written before it). The
python_loader and status_views tests check that the loader and opbench's own
views agree.
"""
import json
import math
import os
import statistics

__all__ = ["load", "load_records", "set_records", "compare_records", "samples", "entry_key"]

_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def samples(stats):
    """Every sample's time per call (seconds) of one repetition's `stats`,
    from the compact histogram of new sets or the list of older ones."""
    hist = stats.get("sample_histogram")
    if hist is None:
        return list(stats.get("sample_times") or [])
    calls = max(1, int(stats.get("calls_per_sample", 1)))
    out, at = [], 0
    for step, count in zip(map(int, hist["ticks"].split()), map(int, hist["counts"].split())):
        at += step
        out.extend([at * hist["tick_seconds"] / calls] * count)
    return out


def entry_key(name):
    """An entry's name without its backend ("matmul/M:64/dt:f32/be:onednn"
    gives "matmul/M:64/dt:f32"): the CSV's `key`."""
    return "/".join(p for p in name.split("/") if not p.startswith("be:"))


def _median(values):
    # As harness/measure/statistics.cpp: linear interpolation at q = 0.5.
    v = sorted(values)
    h = (len(v) - 1) * 0.5
    lo = math.floor(h)
    return v[lo] if lo + 1 >= len(v) else v[lo] + (h - lo) * (v[lo + 1] - v[lo])


def _ratio(a, b):
    return a / b if a is not None and b else None


def set_records(result_set, path="", accept_unmet_noise=False):
    """One dict per entry of a parsed result set (see the module's doc)."""
    ctx = result_set.get("context", {})
    ob = ctx.get("opbench", {})
    entries, order = {}, []
    for e in result_set.get("benchmarks", []):
        if e.get("run_type", "iteration") != "iteration" or "op" not in e or "backend" not in e:
            continue
        name = e.get("run_name", e.get("name", "")).removesuffix("/manual_time")
        if name not in entries:
            order.append(name)
            entries[name] = {"entry": e, "reps": []}
        status = e.get("status", "failed" if e.get("error_occurred") else "passed")
        if status == "starved":  # its repetitions' figures, kept beside its error entry
            entries[name]["reps"] += [_repetition({"stats": st}) for st in e.get("starved_repetitions") or []]
            continue
        if status != "passed" or e.get("error_occurred"):
            continue
        entries[name]["reps"].append(_repetition(e))
    rows = []
    for name in order:
        e, reps = entries[name]["entry"], entries[name]["reps"]
        status = e.get("status", "failed" if e.get("error_occurred") else "passed")
        # One policy with opbench's own views (measure/entry_summary.hpp):
        # the median of every repetition's median but the starved ones'.
        kept = [r for r in reps if not r["starved"]]
        # A throttled repetition (the GPU's clock had fallen, issue 41) too,
        # unless every one was: the entry then keeps them, quality throttled.
        if not all(r["throttled"] for r in kept):
            kept = [r for r in kept if not r["throttled"]]
        median = _median([r["median"] for r in kept]) if kept and status == "passed" else None
        if status != "passed":
            time_status, reason = status, e.get("reason", e.get("error_message", ""))
        elif not reps:
            time_status, reason = "failed", "no repetition recorded"
        elif median is None:
            time_status = "starved"
            reason = f"every repetition starved ({len(reps)}): its threads waited for a CPU"
        else:
            time_status, reason = "ok", ""
        summary = e.get("summary") or {}
        timed = time_status == "ok"
        roof = e.get("roofline") or {}
        settings = e.get("settings", {})
        row = {"set": _stem(path), "commit": ob.get("build", {}).get("git_commit", ""),
               "timestamp": ob.get("timestamp", ctx.get("date", "")),
               "machine_id": ob.get("machine", {}).get("id", ""), "suite": ob.get("suite", {}).get("name", ""),
               "name": name, "case": e.get("case") or e.get("op", ""), "key": entry_key(name),
               "op": e.get("op", ""), "backend": e.get("backend", ""),
               "dtype": e.get("dtype", ""), "variant": e.get("variant", "")}
        for k, v in (e.get("params") or {}).items():
            row["param_" + k] = v
        threads = settings.get("threads_resolved")  # what ran; `threads` 0 means "all"
        row.update({"threads": settings.get("threads") if threads is None else threads, "cache": settings.get("cache"), "status": time_status,
                    "reason": reason,
                    # The run's stored summary (sets before it have none: None).
                    "quality": summary.get("quality") if timed else None,
                    "quality_reasons": ",".join(r.get("code", "") for r in summary.get("reasons", []))
                    if timed and summary else None})
        row.update(_starvation(reps))
        metrics = _metrics(e, median, kept, reps, status, roof)
        for k, v in metrics.items():  # spread_pct: spread in percent, right after it
            row[k] = v
            if k == "spread":
                row["spread_pct"] = None if v is None else 100 * v
        rows.append(row)
    return rows


# The metric columns (harness/measure/entry_metrics.hpp's table, in its
# order): the entry's stored `metrics` object when the run wrote one, else
# the same figures computed here for a set written before it. Every key of a
# stored object becomes a column, so a metric added to the table reaches the
# loader with no change here (after these, in the object's order).
_METRIC_COLUMNS = ["median_s", "spread", "repetitions", "repetitions_missed_noise_target", "samples", "flop",
                   "byte", "flop_per_s", "byte_per_s", "pct_peak_compute", "pct_peak_bandwidth"]


def _metrics(e, median, kept, reps, status, roof):
    stored = e.get("metrics")
    if isinstance(stored, dict):
        row = {k: stored.get(k) for k in _METRIC_COLUMNS}
        row.update((k, v) for k, v in stored.items() if k not in row)
        return row
    medians = [r["median"] for r in kept]
    spread = (max(medians) - min(medians)) / 2 / median if median and len(medians) >= 2 else None
    return {"median_s": median, "spread": spread, "repetitions": len(kept) if median is not None else None,
            "repetitions_missed_noise_target": sum(1 for r in kept if not r["met"]) if status == "passed" else 0,
            # Every repetition's samples, the starved ones' too, as the run stores them.
            "samples": sum(r["samples"] for r in reps) if median is not None else None,
            "flop": e.get("flops"), "byte": e.get("bytes"),
            "flop_per_s": _ratio(e.get("flops"), median), "byte_per_s": _ratio(e.get("bytes"), median),
            "pct_peak_compute": roof.get("pct_peak_compute"), "pct_peak_bandwidth": roof.get("pct_peak_bandwidth")}


def _repetition(e):
    """One repetition's figures from an iteration entry (its stats, else real_time)."""
    st = e.get("stats", {})
    median = st.get("median")
    if median is None:
        median = e.get("real_time", 0) * _UNIT_SECONDS.get(e.get("time_unit", "ns"), 1e-9)
    return {"median": median, "met": st.get("noise_target_met", True), "timed_out": st.get("timed_out", False),
            "samples": _sample_count(st), "starved": bool(st.get("starved", False)),
            "starved_share": st.get("starved_share"), "remeasured": int(st.get("remeasured", 0) or 0),
            "throttled": bool(st.get("throttled", False))}


def _starvation(reps):
    """The CSV's starvation columns: repetitions left out as starved, the median
    of their starved_share, the tries measured again (None without figures)."""
    shares = [r["starved_share"] for r in reps if r["starved_share"] is not None]
    if not shares:
        return {"starved_repetitions": sum(r["starved"] for r in reps) if reps else None,
                "starved_share": None, "remeasured": None}
    return {"starved_repetitions": sum(r["starved"] for r in reps), "starved_share": _median(shares),
            "remeasured": sum(r["remeasured"] for r in reps)}


def _sample_count(stats):
    hist = stats.get("sample_histogram")
    if hist is not None:
        return sum(map(int, hist["counts"].split()))
    return len(stats.get("sample_times") or [])


def compare_records(comparison):
    """One dict per case and pair of an `opbench compare --format json` document."""
    rows = []
    for pair in comparison.get("comparisons", []):
        for c in pair.get("cases", []):
            ci = c.get("ratio_ci95") or [None, None]
            row = {"base_set": _stem(pair.get("base", "")), "new_set": _stem(pair.get("new", "")),
                   "case": c.get("case"), "op": c.get("op"), "backend": c.get("backend"),
                   "dtype": c.get("dtype"), "variant": c.get("variant")}
            for k, v in (c.get("params") or {}).items():
                row["param_" + k] = v
            row.update({"verdict": c.get("verdict"), "reason": c.get("reason", ""),
                        "base_median_s": c.get("base_median_seconds"), "new_median_s": c.get("new_median_seconds"),
                        "ratio": c.get("ratio"), "ratio_ci95_low": ci[0], "ratio_ci95_high": ci[1],
                        "p_value": c.get("p_value"), "test": c.get("test", "")})
            rows.append(row)
    return rows


def _load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_records(source, accept_unmet_noise=False):
    """Rows (dicts) from a result set, a compare JSON, an archive directory,
    or a list of any of them."""
    if isinstance(source, (list, tuple)):
        return [r for s in source for r in load_records(s, accept_unmet_noise)]
    path = os.fspath(source)
    if os.path.isdir(path):
        index = os.path.join(path, "index.json")
        if not os.path.isfile(index):
            raise ValueError(f"{path}: a directory without index.json is not an opbench archive")
        sets = _load_json(index).get("sets", [])
        return [r for s in sets for r in load_records(os.path.join(path, s["path"]), accept_unmet_noise)]
    doc = _load_json(path)
    if isinstance(doc, dict) and "benchmarks" in doc:
        return set_records(doc, path, accept_unmet_noise)
    if isinstance(doc, dict) and "comparisons" in doc:
        return compare_records(doc)
    raise ValueError(f"{path}: neither a result set (`benchmarks`) nor an opbench compare JSON (`comparisons`)")


def load(source, accept_unmet_noise=False):
    """load_records() as a pandas DataFrame, or the list itself without pandas."""
    rows = load_records(source, accept_unmet_noise)
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame.from_records(rows)


if __name__ == "__main__":
    import sys
    if len(sys.argv) < 2:
        sys.exit("usage: opbench_results.py RESULT_SET|COMPARE_JSON|ARCHIVE_DIR... (prints the table)")
    table = load(sys.argv[1:])
    print(table.to_string() if hasattr(table, "to_string") else "\n".join(map(str, table)))
