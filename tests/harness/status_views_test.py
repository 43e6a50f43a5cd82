#!/usr/bin/env python3
"""One status, one quality and one median text per entry in every view
(issue 26, item 3).

    status_views_test.py OPBENCH SUITE WORKDIR [NAIVE_PLUGIN]

Builds one result set holding every kind of entry (clean, noisy, bimodal,
quantised, starved, partly starved, every repetition missed its noise target,
throttled and partly throttled (issue 41: a GPU's clock below 85% of its
sustained one), skipped, failed, and a decoder workload's phases), runs every view on it
(compare as text, Markdown, JSON and CSV; compare --by backend and --by
machine in the same four; history over an archive of it; analyze; the HTML
report; the Python loader), and fails on the first entry for which two views
disagree on its status word, its quality or its median text, or on a geomean
that counts other entries than the loader's times allow. Then it plants a
disagreement in each kind of view output and checks that the checker fails
on every one: a checker that cannot fail proves nothing.

The set is derived from a real run of SUITE (tests/harness/status_views.toml)
on naive, so it has exactly the shape `opbench run` writes; the test then
writes each entry's repetitions, status, stored `summary` and `metrics`
itself (no time measured by the run is asserted), and copies every naive
entry as an `onednn` one so the backend views have two levels. With
NAIVE_PLUGIN, the same is done first with a set that `opbench ab` wrote (that
file against itself; its base side's entries, their pairs and the paired
context kept), so `ab`'s sets pass the same test as `run`'s (issue 29).

Status words: a view that shows a time (a compare verdict same / faster /
slower / noisy, a level cell's time, a history median, an analyze row, a
report median) says the entry is `ok` (the loader's and the CSVs' word;
`passed` in the set); otherwise the view must print the entry's own status:
failed, skipped or starved.
"""
import copy
import csv
import html.parser
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import opbench_results  # noqa: E402  (the loader under test)

QUALITIES = ("clean", "noisy", "disturbed", "throttled")
UNTIMED = ("failed", "skipped", "starved")
US = 1e-6


class Disagreement(AssertionError):
    pass


# ---- the fixture ---------------------------------------------------------

# Each kind: repetition medians (seconds), whether each met the noise target,
# which were starved, the entry status, and the quality the one summary must
# give (by its rule in harness/measure/entry_summary.cpp). `fastest`: each
# repetition's fastest sample as a share of its median.
KINDS = {
    "clean": dict(medians=[12.30, 12.31, 12.29], quality="clean"),
    "noisy": dict(medians=[20.0, 22.0, 24.0], quality="noisy"),  # spread 9% > 1% target
    "bimodal": dict(medians=[15.0, 15.1, 60.0], quality="disturbed"),  # a 4x gap
    # whole milliseconds for work whose fastest sample took 10 us
    "quantised": dict(medians=[4000.0, 4000.0, 8000.0], fastest=[10.0, 10.0, 10.0], quality="disturbed"),
    "starved": dict(medians=[8000.0, 8000.0, 8000.0], starved=[True] * 3, status="starved"),
    "part_starved": dict(medians=[31.0, 4000.0, 31.2], starved=[False, True, False], quality="noisy"),
    "missed": dict(medians=[45.6, 45.7, 45.5], met=[False] * 3, quality="noisy"),
    # A GPU's clock below 85% of its sustained one (issue 41): every
    # repetition (the entry keeps their median, quality throttled), or one
    # (left out, noisy), as a starved one is.
    "throttled": dict(medians=[30.0, 30.1, 29.9], throttled=[True] * 3, quality="throttled"),
    "part_throttled": dict(medians=[40.0, 90.0, 40.2], throttled=[False, True, False], quality="noisy"),
    "skipped": dict(status="skipped", reason="backend not built with this op"),
    "failed": dict(status="failed", reason="nmse 0.5 over threshold 1e-05"),
}
# Each op case's kind per backend: (naive, onednn); a clean onednn entry at
# half naive's time, so the backend views have a speed-up to show.
CASE_KINDS = {"clean": ("clean", "clean"), "noisy": ("noisy", "clean"), "bimodal": ("bimodal", "clean"),
              "quantised": ("clean", "quantised"), "starved": ("clean", "starved"),
              "part_starved": ("clean", "part_starved"), "missed": ("missed", "missed"),
              "throttled": ("clean", "throttled"), "part_throttled": ("clean", "part_throttled"),
              "skipped": ("clean", "skipped"), "failed": ("clean", "failed")}
# The workload's phases: naive clean, onednn prefill every repetition missed, decode starved.
WORKLOAD_KINDS = {("naive", "prefill"): ("clean", 1000.0), ("naive", "decode"): ("clean", 2000.0),
                  ("onednn", "prefill"): ("missed", 300.0), ("onednn", "decode"): ("starved", 900.0)}


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def histogram(samples):
    """stats.sample_histogram (harness/measure/sample_codec.hpp) of per-call
    seconds at calls_per_sample 1 and a 1 ns tick."""
    ticks = sorted(round(s * 1e9) for s in samples)
    distinct, counts = [], []
    for t in ticks:
        if distinct and distinct[-1] == t:
            counts[-1] += 1
        else:
            distinct.append(t)
            counts.append(1)
    steps = [distinct[0]] + [b - a for a, b in zip(distinct, distinct[1:])]
    return {"tick_seconds": 1e-9, "ticks": " ".join(map(str, steps)), "counts": " ".join(map(str, counts))}


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def rep_stats(template, m, met, starved, fastest, throttled=False):
    """One repetition's `stats` as the run writes them (entry/results.cpp,
    summary_json), around median `m`: seven samples, the fastest at `fastest`."""
    samples = [fastest, m * 0.999, m * 0.9995, m, m, m * 1.0005, m * 1.001]
    st = copy.deepcopy(template)
    st.update({"samples": len(samples), "calls_per_sample": 1, "min": fastest, "mean": sum(samples) / len(samples),
               "median": m, "p90": m * 1.001, "p99": m * 1.001, "max": m * 1.001, "median_ci95": [m * 0.999, m * 1.001],
               "noise": 0.001 if met else 0.05, "noise_target_met": met, "timed_out": not met,
               "sample_histogram": histogram(samples), "cpu_time_per_call": m,
               "run_queue_wait_seconds": 0.7 * m * len(samples) if starved else 0.0,
               "starved_share": 0.7 if starved else 0.0, "starved": starved,
               "remeasured": 2 if starved or throttled else 0,
               # the device's clock (issue 41): 900 of a sustained 1500 MHz when throttled
               "sm_clock_mhz": 900.0 if throttled else 1500.0, "clock_share": 0.6 if throttled else 1.0,
               "throttled": throttled})
    st.pop("sample_times", None)
    return st


def summary_of(kind, medians, starved, met, quality, throttled):
    """The entry's stored `summary` (EntrySummary::to_json) for a kind: its
    quality and reason codes by construction."""
    every_throttled = all(t or s for t, s in zip(throttled, starved)) and any(throttled)
    kept = [m for m, s, t in zip(medians, starved, throttled) if not s and (not t or every_throttled)]
    med = median(kept)
    spread = (max(kept) - min(kept)) / 2 / med if len(kept) >= 2 else None
    codes = {"clean": [], "noisy": ["spread"], "bimodal": ["bimodal", "spread"], "quantised": ["quantised", "spread"],
             "part_starved": ["starved"], "missed": ["missed_noise_target"], "throttled": ["throttled"],
             "part_throttled": ["throttled"]}[kind]
    severity = {"bimodal": "disturbed", "quantised": "disturbed", "throttled": "throttled" if every_throttled else "noisy"}
    reasons = [{"code": c, "severity": severity.get(c, "noisy"), "text": c} for c in codes]
    return {"median_seconds": med, "spread": spread, "repetitions": len(kept),
            "missed_noise_target": sum(1 for m, s in zip(met, starved) if not m and not s),
            "starved_repetitions": sum(starved), "throttled_repetitions": sum(throttled), "quality": quality,
            "reasons": reasons}


def metrics_of(template, summary, e, samples_per_rep=7):
    """The entry's stored `metrics` (entry_metrics_json): the template's keys,
    the figures that follow from the median recomputed."""
    med = summary["median_seconds"]
    old = template.get("median_s") or med
    out = dict(template)
    out.update({"median_s": med, "spread": summary["spread"], "repetitions": summary["repetitions"],
                "repetitions_missed_noise_target": summary["missed_noise_target"],
                "samples": samples_per_rep * summary["repetitions"],
                "flop_per_s": (e.get("flops") or 0) / med or None, "byte_per_s": (e.get("bytes") or 0) / med or None})
    for k in ("pct_peak_compute", "pct_peak_bandwidth"):
        if isinstance(out.get(k), (int, float)):
            out[k] = out[k] * old / med
    return out


def scaled_roofline(roof, old, new):
    """The roofline at the new median: its % of peak scale with 1 / time."""
    if not isinstance(roof, dict):
        return roof
    roof = dict(roof)
    for k in ("pct_peak_compute", "pct_peak_bandwidth"):
        if isinstance(roof.get(k), (int, float)) and old and new:
            roof[k] = roof[k] * old / new
    return roof


def make_entries(records, kind, scale):
    """An entry of `kind` from its real records (the run's, in order)."""
    spec = KINDS[kind]
    first = records[0]
    passed = [r for r in records if r.get("run_type") == "iteration" and r.get("status") == "passed"
              and not r.get("error_occurred")]
    base = copy.deepcopy(passed[0] if passed else first)
    for k in ("summary", "metrics", "starved_repetitions"):
        base.pop(k, None)
    status = spec.get("status", "passed")
    if status in ("skipped", "failed"):
        e = copy.deepcopy(base)
        e.pop("stats", None)
        e.update({"status": status, "reason": spec["reason"], "error_occurred": True,
                  "error_message": f"{status}: {spec['reason']}", "real_time": 0, "cpu_time": 0, "iterations": 0,
                  "repetitions": 1, "repetition_index": 0, "roofline": None, "repetition_spread": None})
        return [e]
    medians = [m * US * scale for m in spec["medians"]]
    n = len(medians)
    met = spec.get("met", [True] * n)
    starved = spec.get("starved", [False] * n)
    throttled = spec.get("throttled", [False] * n)
    fastest = [f * US for f in spec["fastest"]] if "fastest" in spec else [m * 0.998 for m in medians]
    template_stats = base.get("stats") or {}
    stats = [rep_stats(template_stats, m, ok, s, f, t)
             for m, ok, s, f, t in zip(medians, met, starved, fastest, throttled)]
    if status == "starved":
        e = copy.deepcopy(base)
        e.pop("stats", None)
        reason = "every repetition starved: its threads waited for a CPU; use --threads 1, --cpus or a quieter machine"
        e.update({"status": "starved", "reason": reason, "error_occurred": True, "error_message": "starved: " + reason,
                  "real_time": 0, "cpu_time": 0, "iterations": 0, "repetitions": 1, "repetition_index": 0,
                  "roofline": None, "repetition_spread": None, "starved_repetitions": stats})
        return [e]
    summary = summary_of(kind, medians, starved, met, spec["quality"], throttled)
    metrics = metrics_of(passed[0].get("metrics", {}) if passed else {}, summary, base)
    unit = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1}[base.get("time_unit", "ns")]
    real_median = (passed[0].get("metrics") or {}).get("median_s") if passed else None
    base["roofline"] = scaled_roofline(base.get("roofline"), real_median, summary["median_seconds"])
    out = []
    for i, st in enumerate(stats):
        e = copy.deepcopy(base)
        e.update({"repetition_index": i, "repetitions": n, "real_time": st["median"] * unit,
                  "cpu_time": st["median"] * unit, "stats": st, "summary": summary, "metrics": metrics,
                  "repetition_spread": summary["spread"]})
        out.append(e)
    return out


def as_backend(entry, backend):
    """A copy of a naive entry as another backend's (name, run_name, backend)."""
    e = copy.deepcopy(entry)
    for k in ("name", "run_name"):
        if k in e:
            e[k] = e[k].replace("/be:naive", "/be:" + backend)
    e["backend"] = backend
    e["reference"] = False
    return e


def real_set(opbench, suite, workdir, ab_plugin):
    """A real set of `suite`: `opbench run` on naive, or (with `ab_plugin`,
    the naive plugin's file) `opbench ab` of that file against itself, its
    base side's entries named as naive's (their pairs, the set's paired
    context and canary kept: the shape `ab` writes)."""
    real = os.path.join(workdir, "real.json")
    if not ab_plugin:
        run([opbench, "run", suite, "--backends", "naive", "--out", real, "--force", "--no-progress"])
        with open(real, encoding="utf-8") as f:
            return json.load(f)
    cmd = [opbench, "ab", suite, "--plugin", f"naive@a={ab_plugin}", "--plugin", f"naive@b={ab_plugin}",
           "--pairs", "6", "--seconds", "0.0005", "--out", real, "--force", "--no-progress"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: a case not same (noisy, starved) on a busy machine
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    with open(real, encoding="utf-8") as f:
        doc = json.load(f)
    assert "paired" in doc["context"]["opbench"], "ab's set has no paired context"
    base = []
    for e in doc["benchmarks"]:
        if e.get("backend") != "naive@a":
            continue
        e = json.loads(json.dumps(e).replace("/be:naive@a", "/be:naive").replace("/be:naive@b", "/be:onednn"))
        e["backend"] = "naive"
        # ab measures to a time, not to a noise target (100%); the kinds'
        # qualities are those of the suite's 1% target, as `run` records it.
        if isinstance(e.get("settings"), dict):
            e["settings"]["noise_target"] = 0.01
        base.append(e)
    assert base and any("pair" in e for e in base), "ab's set has no paired base entries"
    doc["benchmarks"] = base
    ob = doc["context"]["opbench"]
    ob["backends"]["naive"] = ob["backends"].pop("naive@a", {})
    return doc


def build_fixture(opbench, suite, workdir, ab_plugin=None):
    """The fixture set: a real set of `suite` (real_set), each entry rewritten as its kind."""
    doc = real_set(opbench, suite, workdir, ab_plugin)
    ob = doc["context"]["opbench"]
    # A quiet machine: the load this run saw (the test's own build beside it)
    # would make every entry `oversubscribed`; the kinds set their quality.
    ob.setdefault("machine", {})["load_average"] = [0.0, 0.0, 0.0]
    doc["context"]["load_avg"] = [0.0, 0.0, 0.0]
    ob.setdefault("backends", {})["onednn"] = copy.deepcopy(ob["backends"].get("naive", {}))
    by_name, order = {}, []
    for e in doc["benchmarks"]:
        if e.get("run_type", "iteration") != "iteration":
            continue  # Google Benchmark's aggregates: no reader of these views takes them
        name = e.get("run_name", e["name"]).removesuffix("/manual_time")
        if name not in by_name:
            order.append(name)
        by_name.setdefault(name, []).append(e)
    benchmarks, expected = [], {}
    for backend in ("naive", "onednn"):
        for name in order:
            records = [as_backend(r, backend) for r in by_name[name]]
            first = records[0]
            if first.get("phase"):
                kind, us = WORKLOAD_KINDS[(backend, first["phase"])]
                scale = us / KINDS[kind]["medians"][0]
            else:
                kind = CASE_KINDS[first["case"].removeprefix("k.")][backend == "onednn"]
                scale = 0.5 if backend == "onednn" and kind == "clean" else 1.0
            entries = make_entries(records, kind, scale)
            benchmarks += entries
            expected[entry_key(first)] = kind
    doc["benchmarks"] = benchmarks
    ob["suite"]["cases"] = len(order)
    path = os.path.join(workdir, "fixture.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return path, expected


def entry_key(e):
    """(case, backend, phase): how the test names an entry in every view."""
    return (e.get("case", ""), e.get("backend", ""), e.get("phase", ""))


def fmt_seconds(s):
    """harness/writers/units.cpp's format_seconds: how every view prints a median."""
    if s is None or not math.isfinite(s):
        return "-"
    a = abs(s)
    if a == 0:
        return "0"
    for limit, scale, unit in ((1e-6, 1e9, "ns"), (1e-3, 1e6, "us"), (1, 1e3, "ms")):
        if a < limit:
            return f"{s * scale:.3g} {unit}"
    return f"{s:.3g} s"


def expected_of(kind):
    """What every view must say of an entry of `kind`, by construction."""
    spec = KINDS[kind]
    status = spec.get("status", "passed")
    if status != "passed":
        return {"status": status, "quality": "-", "median": "-"}
    return {"status": "ok", "quality": spec["quality"], "median": None}  # median: the loader's, checked below


# ---- the views -------------------------------------------------------------
# Each returns {entry key: {"status": ..., "quality": ..., "median": ...}}
# with only the fields the view shows.


def loader_view(fixture):
    out = {}
    for r in opbench_results.load_records(fixture):
        phase = re.search(r"/phase:([a-z]+)", r["name"])  # the loader has no phase column; its name has
        key = (r["case"], r["backend"], phase.group(1) if phase else "")
        out[key] = {"status": r["status"], "quality": r["quality"] or "-",
                    "median": fmt_seconds(r["median_s"]) if r["status"] == "ok" else "-"}
        if r.get("param_tokens_per_call") is not None:  # a workload phase: tokens/s from the same median
            out[key]["tokens"] = (tokens_text(r["param_tokens_per_call"] / r["median_s"])
                                  if r["status"] == "ok" else r["status"])
    # A row of the backend tables (case x phase): the worst quality of its timed entries.
    order = {"-": -1, "clean": 0, "noisy": 1, "disturbed": 2, "throttled": 3}
    for key, v in out.items():
        row = [w["quality"] for k, w in out.items() if (k[0], k[2]) == (key[0], key[2])]
        v["row_quality"] = max(row, key=order.get)
    return out


TIMED_VERDICTS = ("same", "faster", "slower", "noisy")  # compare's verdicts of an entry with a time


class Keys:
    """Finds which fixture entry a view's label names: the case name as a
    whole word (k.starved is not k.part_starved) and a workload's phase."""

    def __init__(self, keys):
        self.keys = sorted(keys, key=lambda k: -len(k[0]))
        # A workload phase: its name, or its kind where a compact table moved
        # the name (shared by every workload row) to its legend.
        self.patterns = {k: re.compile(r"(?<![\w.])(" + re.escape(k[0]) + ("|decoder" if k[2] else "")
                                       + r")(?![\w.])") for k in self.keys}

    def find(self, text, backend):
        for k in self.keys:
            if k[1] != backend or not self.patterns[k].search(text):
                continue
            if k[2] and not re.search(r"\b" + k[2] + r"\b", text):
                continue
            return k
        return None


def status_of_verdict(verdict):
    # `throttled` (issue 41): the entry has a time, but compare gives it no
    # ratio (no rate, no speed-up): its verdict is its quality.
    return "ok" if verdict in TIMED_VERDICTS or verdict == "throttled" else verdict


def compare_json_view(doc, keys, side="base"):
    out = {}
    for c in doc["comparisons"][0]["cases"]:
        key = keys.find(c["case"], c["backend"])
        if key is None:
            raise Disagreement(f"compare json: a case the fixture does not hold: {c['case']} [{c['backend']}]")
        status = status_of_verdict(c["verdict"])
        summary = c.get(side + "_summary")
        out[key] = {"status": status,
                    "quality": c.get("quality") if status == "ok" else (c.get("quality") or "-"),
                    "median": fmt_seconds(c.get(side + "_median_seconds")) if status == "ok" else "-"}
        if c["verdict"] == "throttled":  # no ratio, so no median beside one
            if c.get("compared"):
                raise Disagreement(f"compare json: a throttled entry given a ratio: {c['case']} [{c['backend']}]")
            del out[key]["median"]
        if summary is not None and status == "ok":
            out[key]["summary_median"] = fmt_seconds(summary["median_seconds"])
    return out


def csv_entries_view(text, keys):
    """compare --format csv: one row per entry and set (tidy_records)."""
    out = {}
    for row in csv.DictReader(io.StringIO(text)):
        phase = re.search(r"/phase:([a-z]+)", row["name"])
        key = (row["case"], row["backend"], phase.group(1) if phase else "")
        median = float(row["median_s"]) if row["median_s"] not in ("", "-") else None
        out.setdefault(row["set"], {})[key] = {"status": row["status"], "quality": row["quality"] or "-",
                                               "median": fmt_seconds(median)}
    return out


def check_views(reference, views, expected=None, complete=()):
    """Raises Disagreement at the first entry and field where a view differs
    from the reference (the loader). Each view reports only what it shows;
    `complete` names the views that must list every entry of the reference.
    `expected`: per entry, what its kind must give (status, quality)."""
    if expected:
        for key, want in sorted(expected.items()):
            got = reference.get(key)
            if got is None:
                raise Disagreement(f"loader: no row for {key}")
            if got["status"] == "starved" and want.get("status") == "ok":
                continue  # a busy machine starved it: no time to judge by its kind; the views must still agree
            for field in ("status", "quality", "median"):
                if want.get(field) is not None and got[field] != want[field]:
                    raise Disagreement(f"loader: {key} {field} {got[field]!r}, its kind gives {want[field]!r}")
    for name, view in views.items():
        if name in complete:
            # analyze lists the timed entries only (a diagnosis needs a time).
            listed = {k for k, v in reference.items() if v["status"] == "ok" or not name.startswith("analyze")}
            missing = sorted(listed - set(view))
            if missing:
                raise Disagreement(f"{name}: no row for {missing[0]}")
        for key in sorted(view):
            if key not in reference:
                raise Disagreement(f"{name}: an entry the loader does not have: {key}")
            for field, value in sorted(view[key].items()):
                want = reference[key].get(field.replace("summary_", ""))
                if value != want:
                    raise Disagreement(f"{name}: {key[0]} [{key[1]}{' ' + key[2] if key[2] else ''}] {field} "
                                       f"{value!r}, the loader says {want!r}")


# ---- tables out of each format ----------------------------------------------
# Every table as (title, columns, rows of cells).


def console_tables(text):
    """The console writer's tables (harness/writers/console_writer.cpp): a
    header, a rule of dashes per column, then rows; the rule gives the
    columns' spans (a last text column may run past its rule)."""
    lines = text.split("\n")
    tables = []
    for i, line in enumerate(lines):
        if i == 0 or not re.fullmatch(r" ( -+)+", line):
            continue
        spans = [m.span() for m in re.finditer(r"-+", line)]
        header = lines[i - 1]
        title = lines[i - 2] if i >= 2 else ""

        def cells(row):
            out = []
            for n, (a, b) in enumerate(spans):
                # Right-aligned numbers end at the rule's end; text starts at its start.
                end = len(row) if n + 1 == len(spans) else spans[n + 1][0] - 1
                out.append(row[a:end].strip())
            return out
        rows = []
        for row in lines[i + 1:]:
            if not row.strip() or not row.startswith("  "):
                break  # a blank line or the next title
            if any(a - 1 < len(row) and row[a - 1] != " " for a, _ in spans[1:]) or not cells(row)[-1]:
                break  # a note: its words run across the columns' gaps, or stop short of the last
            rows.append(cells(row))
        tables.append((title, cells(header), rows))
    return tables


def markdown_tables(text):
    lines = text.split("\n")
    tables = []
    for i, line in enumerate(lines):
        if i == 0 or not re.fullmatch(r"\|( *:?-+:? *\|)+", line.strip()):
            continue
        # Cells between unescaped pipes, Markdown's escapes (\_ \| \*) undone.
        split = lambda row: [re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]
        title = next((t for t in reversed(lines[:i - 1]) if t.strip()), "")
        rows = []
        for row in lines[i + 1:]:
            if not row.startswith("|"):
                break
            rows.append(split(row))
        tables.append((title, split(lines[i - 1]), rows))
    return tables


class _HtmlTables(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.cell, self.heading, self.last_heading = [], None, None, ""

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append((self.last_heading, [], []))
        elif tag == "tr" and self.tables:
            self.tables[-1][2].append([])
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag in ("h1", "h2", "h3"):
            self.heading = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None and self.tables:
            self.tables[-1][2][-1].append(self.cell.strip())
            self.cell = None
        elif tag in ("h1", "h2", "h3") and self.heading is not None:
            self.last_heading, self.heading = self.heading.strip(), None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.heading is not None:
            self.heading += data


def html_tables(text):
    p = _HtmlTables()
    p.feed(text)
    out = []
    for title, _, rows in p.tables:
        rows = [r for r in rows if r]
        if rows:
            out.append((title, rows[0], rows[1:]))
    return out


# ---- the views' tables as entries --------------------------------------------


def first_word(cell, words):
    """The first of `words` in a cell ("noisy: 3 of 3 ... [1]" -> noisy), else "-"."""
    m = re.search(r"\b(" + "|".join(words) + r")\b", cell or "")
    return m.group(1) if m else "-"


def compare_tables_view(tables, keys):
    """compare's two tables per pair, console or Markdown, compact or --wide:
    compared (case, backend, base, ..., verdict, quality) and no ratio
    (case, backend, status, quality | reason)."""
    out = {}
    for _, cols, rows in tables:
        if cols[:2] != ["case", "backend"]:
            continue
        for r in rows:
            d = dict(zip(cols, r))
            key = keys.find(d["case"], d["backend"])
            if key is None:
                raise Disagreement(f"a compare row the fixture does not hold: {r}")
            if "verdict" in d and first_word(d["verdict"], ("throttled",)) == "throttled":
                out[key] = {"status": "ok", "quality": "throttled"}  # no ratio, no median beside one (issue 41)
            elif "verdict" in d and "quality" not in d:
                # The report's comparison: no quality column; its test cell
                # names an unclean side ("base noisy: ..."), else clean.
                status = status_of_verdict(d["verdict"])
                m = re.search(r"\bbase (" + "|".join(QUALITIES) + r")\b", d.get("test", ""))
                out[key] = {"status": status, "median": d["base"],
                            "quality": (m.group(1) if m else "clean") if status == "ok" else "-"}
            elif "verdict" in d:
                out[key] = {"status": status_of_verdict(d["verdict"]), "median": d["base"],
                            "quality": first_word(d["quality"], QUALITIES)}
            else:
                status = first_word(d["status"], UNTIMED + TIMED_VERDICTS + ("throttled",))
                out[key] = {"status": status, "median": "-"}
                if status == "throttled":  # a time, no ratio (issue 41): shown without one
                    out[key] = {"status": "ok", "quality": "throttled"}
                if "quality" in d:
                    out[key]["quality"] = first_word(d["quality"], QUALITIES)
    return out


def level_tables_view(tables, keys, backends=("naive", "onednn")):
    """compare --by backend --wide: per backend its time (or status) and its
    quality (the summary's verdict)."""
    out = {}
    for title, cols, rows in tables:
        if not cols or cols[0] != "case" or "naive time" not in cols:
            continue
        for r in rows:
            d = dict(zip(cols, r))
            for b in backends:
                key = keys.find(d["case"], b)
                if key is None:
                    raise Disagreement(f"a level row the fixture does not hold: {r}")
                time = d[b + " time"]
                untimed = time in UNTIMED
                out[key] = {"status": time if untimed else "ok", "median": "-" if untimed else time,
                            "quality": first_word(d[b + " quality"], QUALITIES)}
    return out


def level_compact_view(tables, keys, backends=("naive", "onednn")):
    """compare --by backend's default table (and the report's): per backend
    its time or status; one quality column, the worst of the row's timed
    backends (checked against the loader's worst, `row_quality`)."""
    out = {}
    for title, cols, rows in tables:
        if not cols or cols[0] != "case" or not all(b in cols for b in backends) or "quality" not in cols:
            continue
        for r in rows:
            for b in backends:
                key = keys.find(r[0], b)
                if key is None:
                    raise Disagreement(f"a level row the fixture does not hold: {r}")
                time = r[cols.index(b)]
                untimed = time in UNTIMED
                out[key] = {"status": time if untimed else "ok", "median": "-" if untimed else time,
                            "row_quality": first_word(r[cols.index("quality")], QUALITIES)}
    return out


def workload_tables_view(tables, keys, reference_rows):
    """The workload-levels table: per level and phase its tokens/s (tokens per
    call over the entry's median) or its status."""
    out = {}
    for title, cols, rows in tables:
        if cols[:2] != ["workload", "level"]:
            continue
        phases = [c.removesuffix(" tok/s") for c in cols if c.endswith(" tok/s")]
        workload = ""
        for r in rows:
            d = dict(zip(cols, r))
            workload = d["workload"] = d["workload"] or workload  # named on its first level's line only
            for phase in phases:
                key = keys.find(d["workload"] + " " + phase, d["level"].split()[0])  # "naive f32": backend, dtype
                if key is None:
                    raise Disagreement(f"a workload-levels row the fixture does not hold: {r}")
                cell = d[cols[cols.index(phase + " tok/s")]]
                out[key] = {"status": cell if cell in UNTIMED else "ok", "tokens": cell}
    return out


def machine_tables_view(tables, keys):
    """compare --by machine --wide: 'case [backend]', then per set its time or status."""
    out = {}
    for title, cols, rows in tables:
        if not cols or cols[0] != "case [backend]":
            continue
        time_col = next(c for c in cols if c.endswith(" time"))
        for r in rows:
            d = dict(zip(cols, r))
            m = re.fullmatch(r"(.*) \[(\w+)\]", d["case [backend]"])
            key = keys.find(m.group(1), m.group(2))
            if key is None:
                raise Disagreement(f"a by-machine row the fixture does not hold: {r}")
            time = d[time_col]
            out[key] = {"status": time if time in UNTIMED else "ok", "median": "-" if time in UNTIMED else time}
    return out


def machine_json_view(doc, keys):
    out = {}
    for row in doc["rows"]:
        m = re.fullmatch(r"(.*) \[(\w+)\]", row["case"])
        key = keys.find(m.group(1), m.group(2)) if m else None
        if key is None:
            raise Disagreement(f"by machine json: a case the fixture does not hold: {row['case']}")
        cell = row["sets"]["fixture"]
        ok = cell["status"] == "ok"
        out[key] = {"status": cell["status"], "median": fmt_seconds(cell["median_seconds"]) if ok else "-"}
    return out


def history_tables_view(tables, keys):
    """history --wide: 'case [backend]', a column per run (its median or its status)."""
    out = {}
    for title, cols, rows in tables:
        if not cols or cols[0] != "case [backend]":
            continue
        for r in rows:
            m = re.fullmatch(r"(.*) \[(\w+)\]", r[0])
            key = keys.find(m.group(1), m.group(2))
            if key is None:
                raise Disagreement(f"a history row the fixture does not hold: {r}")
            cell = r[1]
            out[key] = {"status": cell if cell in UNTIMED else "ok", "median": "-" if cell in UNTIMED else cell}
    return out


def history_json_view(doc, keys):
    out = {}
    for c in doc.get("cases", []):
        m = re.fullmatch(r"(.*) \[(\w+)\]", c["case"])
        key = keys.find(m.group(1), m.group(2)) if m else None
        if key is None:
            raise Disagreement(f"history json: a case the fixture does not hold: {c['case']}")
        out[key] = {"median": fmt_seconds(c["median_seconds"][-1]), "quality": c["quality"][-1] or "-"}
    return out


# ---- running the views ----------------------------------------------------------


def collect_views(opbench, workdir, fixture, keys):
    """Every view of the fixture, as entries."""
    other = os.path.join(workdir, "again.json")  # compare needs two sets: the fixture and a copy
    shutil.copyfile(fixture, other)
    views = {}
    ob = lambda *args: run([opbench, *args])
    pair = [fixture, other]
    for wide in ([], ["--wide"]):
        tag = " --wide" if wide else ""
        views["compare text" + tag] = compare_tables_view(console_tables(ob("compare", *pair, *wide)), keys)
        views["compare markdown" + tag] = compare_tables_view(
            markdown_tables(ob("compare", *pair, "--format", "markdown", *wide)), keys)
    doc = json.loads(ob("compare", *pair, "--format", "json"))
    views["compare json"] = compare_json_view(doc, keys)
    sets = csv_entries_view(ob("compare", *pair, "--format", "csv"), keys)
    views["compare csv"] = sets.get("fixture", {})
    by_backend = [fixture, "--by", "backend", "--wide"]
    for fmt, parse in (("console", console_tables), ("markdown", markdown_tables)):
        tables = parse(ob("compare", *by_backend, "--format", fmt))
        views[f"by backend {fmt}"] = level_tables_view(tables, keys)
        views[f"workload levels {fmt}"] = workload_tables_view(tables, keys, None)
    # Without --wide: the console's compact table (Markdown writes the wide one anyway).
    views["by backend console compact"] = level_compact_view(console_tables(ob("compare", fixture, "--by", "backend")), keys)
    views["by backend markdown default"] = level_tables_view(
        markdown_tables(ob("compare", fixture, "--by", "backend", "--format", "markdown")), keys)
    doc = json.loads(ob("compare", *by_backend, "--format", "json"))
    views["by backend json"] = level_json_view(doc, keys)
    geomeans = (json.loads(ob("compare", *pair, "--format", "json")), doc,
                ob("compare", fixture, "--by", "backend"))
    views["workload levels json"] = workload_json_view(doc, keys)
    views["by backend csv"] = csv_entries_view(ob("compare", *by_backend, "--format", "csv"), keys).get("fixture", {})
    views["by machine console"] = machine_tables_view(
        console_tables(ob("compare", fixture, "--by", "machine", "--wide")), keys)
    views["by machine markdown"] = machine_tables_view(
        markdown_tables(ob("compare", fixture, "--by", "machine", "--wide", "--format", "markdown")), keys)
    views["by machine json"] = machine_json_view(
        json.loads(ob("compare", fixture, "--by", "machine", "--format", "json")), keys)
    archive = os.path.join(workdir, "archive")
    shutil.rmtree(archive, ignore_errors=True)
    ob("archive", archive, fixture)
    history = [archive, "--suite", "status-views"]
    views["history console"] = history_tables_view(console_tables(ob("history", *history, "--wide")), keys)
    views["history json"] = history_json_view(json.loads(ob("history", *history, "--format", "json")), keys)
    views["history markdown"] = history_tables_view(
        markdown_tables(ob("history", *history, "--wide", "--format", "markdown")), keys)
    views["analyze"] = analyze_view(plain_tables(ob("analyze", fixture, "--wide", "--top", "1000")), keys)
    report = os.path.join(workdir, "report.html")
    ob("report", *pair, "-o", report, "--force")
    with open(report, encoding="utf-8") as f:
        views.update(report_views(html_tables(f.read()), keys))
    return views, geomeans


def level_json_view(doc, keys):
    out = {}
    for row in doc["rows"]:
        for level, cell in row["levels"].items():
            key = keys.find(row["case"], level)
            if key is None:
                raise Disagreement(f"by backend json: a case the fixture does not hold: {row['case']} [{level}]")
            ok = cell["status"] == "ok"
            out[key] = {"status": cell["status"], "quality": cell.get("quality", "-") if ok else "-",
                        "median": fmt_seconds(cell.get("median_seconds")) if ok else "-"}
            if ok and "quality" not in cell:
                raise Disagreement(f"by backend json: {key} timed without a quality")
    return out


def workload_json_view(doc, keys):
    out = {}
    for row in doc.get("workload_levels", []):
        for phase, cell in row["phases"].items():
            key = keys.find(row["workload"] + " " + phase, row["level"].split()[0])
            if key is None:
                raise Disagreement(f"workload levels json: a row the fixture does not hold: {row}")
            if "tokens_per_second" in cell:
                out[key] = {"status": "ok", "quality": cell["quality"], "median": fmt_seconds(cell["median_seconds"]),
                            "tokens": tokens_text(cell["tokens_per_second"])}
            else:
                out[key] = {"status": cell["status"]}
    return out


def tokens_text(v):
    """workload_levels.cpp's tokens_text."""
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"


def plain_tables(text):
    """harness/writers/console_writer.cpp's render_text_table (analyze): a
    header, one rule of dashes, rows whose cells are two spaces apart."""
    lines = text.split("\n")
    tables = []
    for i, line in enumerate(lines):
        if i == 0 or not re.fullmatch(r"-{3,}", line):
            continue
        rows = []
        for row in lines[i + 1:]:
            cells = re.split(r" {2,}", row.strip())
            if len(cells) < 2:
                break
            rows.append(cells)
        tables.append((lines[i - 2] if i >= 2 else "", re.split(r" {2,}", lines[i - 1].strip()), rows))
    return tables


def analyze_view(tables, keys):
    """analyze --wide: a row per timed entry (its name), its time/call and quality."""
    out = {}
    for title, cols, rows in tables:
        if "case x backend" not in cols:
            continue
        for r in rows:
            d = dict(zip(cols, r))
            m = re.search(r"/be:(\w+)", d["case x backend"])
            key = keys.find(d["case x backend"], m.group(1)) if m else None
            if key is None:
                raise Disagreement(f"analyze: a row the fixture does not hold: {r}")
            out[key] = {"status": "ok", "median": d["time/call"], "quality": first_word(d["quality"], QUALITIES)}
    return out


def report_views(tables, keys):
    """The HTML report's tables: its comparison and its level table."""
    views = {}
    compared = [t for t in tables if t[1][:2] == ["case", "backend"]]
    views["report comparison"] = compare_tables_view(compared, keys)
    views["report levels"] = level_compact_view(tables, keys)
    return views


def check_geomeans(reference, compare_doc, level_doc, level_text):
    """The geomeans count the entries the loader gives a time (both sides, or
    both backends) and say how many they left out. A throttled entry has a
    time but no ratio and no speed-up (issue 41): left out of both."""
    def rated(v):
        return v["status"] == "ok" and v["quality"] != "throttled"
    timed = [k for k, v in reference.items() if rated(v)]
    pair = compare_doc["comparisons"][0]
    by_group = {g["group"]: g["cases"] for g in pair["geomeans"]}
    if by_group.get("all") != len(timed) or pair["counts"]["no_ratio"] != len(reference) - len(timed):
        raise Disagreement(f"compare geomean over {by_group.get('all')} cases, {pair['counts']['no_ratio']} "
                           f"without a ratio; the loader times {len(timed)} of {len(reference)}")
    rows = {(k[0], k[2]) for k in reference}
    both = [r for r in rows if rated(reference[(r[0], "naive", r[1])]) and rated(reference[(r[0], "onednn", r[1])])]
    geo = level_doc["geomean_speedup"].get("onednn", {})
    if geo.get("cases") != len(both) or geo.get("left_out") != len(rows) - len(both):
        raise Disagreement(f"by backend geomean: {geo}; the loader times {len(both)} of {len(rows)} rows on both")
    said = f"onednn {geo['speedup']:.3g}x over {len(both)} cases ({len(rows) - len(both)} left out"
    if said not in level_text:
        raise Disagreement(f"by backend text: no '{said}' in its geomean note")


# ---- planted disagreements -----------------------------------------------------


def plants(fixture, reference, views, keys):
    """Each a (what, reference, views) that must make check_views fail."""
    timed = sorted(k for k, v in reference.items() if v["status"] == "ok")
    starved = sorted(k for k, v in reference.items() if v["status"] == "starved")
    out = []

    # 1. The set itself: its stored summary says clean where the times say
    # noisy; the loader reads the stored flag, every C++ view recomputes it.
    with open(fixture, encoding="utf-8") as f:
        doc = json.load(f)
    noisy = next(k for k in timed if reference[k]["quality"] == "noisy")
    for e in doc["benchmarks"]:
        if entry_key(e) == noisy and "summary" in e:
            e["summary"]["quality"] = "clean"
    planted = fixture.replace(".json", "-planted.json")
    with open(planted, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    out.append(("a stored summary's quality", loader_view(planted), views))  # checked without `expected`

    def perturbed(view, key, field, value):
        v = copy.deepcopy(views)
        v[view][key][field] = value
        return v
    # 2-5. One view's parsed output changed in one field.
    first = lambda name: sorted(views[name])[0]
    out.append(("compare csv says ok for a starved entry", reference,
                perturbed("compare csv", starved[0], "status", "ok")))
    out.append(("by backend json: another median", reference,
                perturbed("by backend json", timed[0], "median", "99.9 us")))
    out.append(("report levels: another median", reference,
                perturbed("report levels", first("report levels"), "median", "1 s")))
    out.append(("compare text: another quality", reference,
                perturbed("compare text", noisy, "quality", "clean")))
    # Issue 41: a throttled entry shown as merely noisy (the readers once dropped stats.throttled).
    throttled = next(k for k in timed if reference[k]["quality"] == "throttled")
    out.append(("by backend: a throttled entry as noisy", reference,
                perturbed("by backend console", throttled, "quality", "noisy")))
    out.append(("workload levels: another tokens/s", reference,
                perturbed("workload levels console", first("workload levels console"), "tokens", "1")))
    out.append(("history misses an entry", reference,
                {**views, "history console": {k: v for k, v in views["history console"].items() if k != timed[0]}}))
    return out


def agree(opbench, suite, workdir, ab_plugin=None):
    """Builds the fixture (from `run`'s set, or `ab`'s) and checks every view
    of it; returns what the plants need, or None after printing a failure."""
    os.makedirs(workdir, exist_ok=True)
    fixture, kinds = build_fixture(opbench, suite, workdir, ab_plugin)
    keys = Keys(kinds.keys())
    reference = loader_view(fixture)
    views, geomeans = collect_views(opbench, workdir, fixture, keys)
    expected = {k: expected_of(kind) for k, kind in kinds.items()}
    # Every view lists every entry (analyze: every timed one); the workload
    # tables only the workload's, checked on what they list.
    complete = [n for n in views if not n.startswith("workload levels")]
    try:
        check_views(reference, views, expected, complete)
        check_geomeans(reference, *geomeans)
    except Disagreement as e:
        print(f"FAIL ({'ab' if ab_plugin else 'run'}'s set): {e}", file=sys.stderr)
        return None
    shown = {n: len(v) for n, v in views.items()}
    print(f"{'ab' if ab_plugin else 'run'}'s set: {len(reference)} entries agree in {len(views)} views: {shown}")
    return fixture, reference, views, keys, geomeans, complete


def main():
    opbench, suite, workdir = sys.argv[1:4]
    naive_plugin = sys.argv[4] if len(sys.argv) > 4 else None
    # Issue 29: `ab`'s sets pass the same test as `run`'s.
    if naive_plugin and agree(opbench, suite, os.path.join(workdir, "ab"), naive_plugin) is None:
        return 1
    checked = agree(opbench, suite, workdir)
    if checked is None:
        return 1
    fixture, reference, views, keys, geomeans, complete = checked
    for what, ref, planted in plants(fixture, reference, views, keys):
        try:
            # Without the kinds' expectations: the views themselves must disagree.
            check_views(ref, planted, None, complete)
        except Disagreement as e:
            print(f"planted ({what}): caught: {e}")
            continue
        print(f"FAIL: planted disagreement not caught: {what}", file=sys.stderr)
        return 1
    # A geomean that counts one case more than the loader's times allow.
    level_doc = copy.deepcopy(geomeans[1])
    level_doc["geomean_speedup"]["onednn"]["cases"] += 1
    try:
        check_geomeans(reference, geomeans[0], level_doc, geomeans[2])
    except Disagreement as e:
        print(f"planted (a geomean over one case more): caught: {e}")
    else:
        print("FAIL: planted disagreement not caught: a geomean over one case more", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
