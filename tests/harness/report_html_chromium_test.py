#!/usr/bin/python3
"""opbench report in a real browser: headless Chromium renders report.html,
its DOM (--dump-dom) must hold the expected charts, and its screenshot must
not be blank. At 800 and 1400 px (issue 30) a probe script run in the page
measures what a reader sees: every verdict and ratio cell inside the window,
rows a few lines tall, the bar and ratio charts as wide as the page, chart
labels unique and not cut off at the left, ratios with three significant
digits, a quality column, and every disturbed or noisy bar marked by a word
as well as its hatch. Skipped (exit 77, which meson shows as SKIP) when Chromium is
not installed: scripts/install-deps.sh installs it.

usage: report_html_chromium_test.py OPBENCH SUITE WORKDIR
"""
import html as htmllib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(browser, args, timeout=120):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-dev-shm-usage"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def png_pixels(path):
    """(width, height, channels, rows of bytes) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), f"unexpected PNG format depth {depth} colour {color}"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif f == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    opbench, suite, work = sys.argv[1:4]
    browser = chromium()
    if not browser:
        print("SKIP: Chromium is not installed (scripts/install-deps.sh --test installs it)")
        return SKIP
    os.makedirs(work, exist_ok=True)
    result = os.path.join(work, "sweep.json")
    report = os.path.join(work, "report.html")
    # A real (tiny) run: attention composed and fused over seq, on naive.
    # --force: the work directory is kept between test runs (opbench refuses
    # to replace an existing result set without it).
    run = subprocess.run([opbench, "run", suite, "--backends", "naive", "--no-progress", "--force", "--out", result],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rep = subprocess.run([opbench, "report", result, "-o", report, "--force"], capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    html = open(report, encoding="utf-8").read()
    assert "http" not in html and "<script src" not in html and "<link" not in html, "report is not self-contained"

    dom = run_browser(browser, ["--dump-dom", "file://" + os.path.abspath(report)])
    assert dom.returncode == 0, dom.stderr[-2000:]
    charts = re.findall(r'<svg class="chart" data-chart="([a-z-]+)"', dom.stdout)
    print("charts in the DOM:", charts)
    for kind in ("time-by-case", "roofline", "sweep-time", "sweep-memory"):
        assert kind in charts, f"no {kind} chart in the rendered DOM"
    bars = dom.stdout.count('<rect class="bar"')
    points = dom.stdout.count('<circle class="point"')
    # An entry whose every repetition starved (a busy machine) has no time:
    # no bar, and no point on the time charts (at most 3 points an entry).
    starved = len({e["name"] for e in json.load(open(result))["benchmarks"] if e.get("status") == "starved"})
    print(f"bars {bars}, points {points}, starved entries {starved}")
    assert starved < 6, "every entry starved: nothing to draw"
    assert bars >= 6 - starved and points >= 12 - 3 * starved, "too few bars or points"

    shot = os.path.join(work, "report.png")
    r = run_browser(browser, ["--window-size=1000,3000", "--screenshot=" + shot, "file://" + os.path.abspath(report)])
    assert r.returncode == 0 and os.path.exists(shot), r.stderr[-2000:]
    width, height, channels, rows = png_pixels(shot)
    non_white = 0
    colours = set()
    for row in rows[::4]:
        for x in range(0, width * channels, channels * 4):
            px = row[x:x + 3]
            if px != b"\xff\xff\xff":
                non_white += 1
                colours.add(px)
    sampled = (height // 4 + 1) * (width // 4 + 1)
    print(f"screenshot {width}x{height}: {non_white} of ~{sampled} sampled pixels not white, {len(colours)} colours")
    assert non_white > sampled * 0.02, "the screenshot is (nearly) blank"
    # The palette's first two colours: bars and points were painted.
    has = lambda rgb: any(abs(c[0] - rgb[0]) + abs(c[1] - rgb[1]) + abs(c[2] - rgb[2]) < 30 for c in colours)
    assert has((0x00, 0x72, 0xB2)), "no blue (first series) pixel in the screenshot"
    # One set: the page opens with its entries (the level table), whose
    # heading is one sentence (the console title's header lines are a note).
    assert html.index('id="levels"') < html.index('id="contexts"'), "the one-set page does not open with its entries"
    heading = re.search(r'<section id="levels">\n<h2>[^<]*</h2>\n<h3>([^<]*)</h3>', html)
    assert heading and "\n" not in heading.group(1) and ". " not in heading.group(1), heading
    for width in (800, 1400):
        probe_widths(browser, report, work, f"report-{width}", width, two_sets=False)
    two_sets(browser, opbench, suite, work, result)
    history_changes(browser, opbench, work, result)
    print("ok:", report, shot)
    return 0


CHANGES_PROBE = """<script>
var w = window.innerWidth, marks = Array.from(document.querySelectorAll('svg[data-chart="history"] line.change'));
var marksOut = marks.filter(function (m) {
  var r = m.getBoundingClientRect(), s = m.closest('svg').getBoundingClientRect();
  return r.left < s.left || r.right > s.right || r.right > w; }).length;
var table = document.querySelector('#history div.changes table'), cells = table ? Array.from(table.querySelectorAll('td')) : [];
var cellsOut = cells.filter(function (c) { var r = c.getBoundingClientRect(); return r.left < 0 || r.right > w; }).length;
var charts = document.querySelectorAll('svg[data-chart="history"]').length;
var marked = Array.from(document.querySelectorAll('svg[data-chart="history"]')).filter(function (s) {
  return s.querySelector('line.change'); }).length;
document.body.dataset.changes = JSON.stringify({width: w, marks: marks.length, marks_out: marksOut, charts: charts,
  marked: marked, rows: table ? Array.from(table.rows).filter(function (r) { return r.querySelector('td'); }).length : 0, cells_out: cellsOut,
  title: marks.length ? marks[0].textContent : ''});
</script></body>"""


def history_changes(browser, opbench, work, first):
    """The history page's change points (issue 43): an archive of 30 runs
    made from the set (scripts/generate_archive.py --plant regression: each
    case 20% slower from run 25 on, the set's spread as run-to-run noise);
    at 800 and 1400 px each case's history chart marks the change with a
    dashed line inside the chart, its title naming the commits and size,
    and the change table lists them with every cell inside the window
    (screenshots kept in WORKDIR to look at)."""
    archive = os.path.join(work, "archive-changes")
    shutil.rmtree(archive, ignore_errors=True)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "generate_archive.py")
    subprocess.run([sys.executable, script, first, archive, "30", "--opbench", opbench, "--plant", "regression",
                    "--truth", os.path.join(work, "changes-truth.json"), "--seed", "5", "--sigma", "0.01"], check=True,
                   capture_output=True)
    newest = json.load(open(os.path.join(archive, "index.json")))["sets"][-1]["path"]
    report = os.path.join(work, "report-changes.html")
    rep = subprocess.run([opbench, "report", os.path.join(archive, newest), "--history", archive, "-o", report,
                          "--force"], capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    page = open(report, encoding="utf-8").read()
    probe = os.path.join(work, "report-changes-probe.html")
    open(probe, "w", encoding="utf-8").write(page.replace("</body>", CHANGES_PROBE))
    for width in (800, 1400):
        dom = run_browser(browser, [f"--window-size={width},2000", "--dump-dom", "file://" + os.path.abspath(probe)])
        assert dom.returncode == 0, dom.stderr[-2000:]
        found = re.search(r'data-changes="([^"]*)"', dom.stdout)
        assert found, "the change probe did not run"
        got = json.loads(htmllib.unescape(found.group(1)))
        print(f"history changes at {width} px: {got}")
        assert got["width"] == width, got
        assert got["charts"] > 0 and got["marked"] == got["charts"], \
            f"{got['marked']} of {got['charts']} history charts mark the planted change"
        assert got["rows"] == got["marks"], f"{got['rows']} table rows for {got['marks']} marks"
        assert got["marks_out"] == 0 and got["cells_out"] == 0, f"marks or change cells outside at {width} px: {got}"
        assert re.search(r"change: \w+\.\.\w+, x1\.(1[5-9]|2[0-5])", got["title"]), f"a mark's title: {got['title']!r}"
        shot = os.path.join(work, f"report-changes-{width}.png")
        r = run_browser(browser, [f"--window-size={width},2400", "--screenshot=" + shot, "file://" + os.path.abspath(report)])
        assert r.returncode == 0 and os.path.exists(shot), r.stderr[-2000:]


def two_sets(browser, opbench, suite, work, first):
    """opbench report A B --history: the page opens with the comparison, has a
    box plot per case and a small history chart per case, its inline script
    filters and sorts, and it renders at 800 and 1400 px (screenshots kept in
    WORKDIR to look at)."""
    second = os.path.join(work, "sweep2.json")
    run = subprocess.run([opbench, "run", suite, "--backends", "naive", "--no-progress", "--force", "--out", second],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    archive = os.path.join(work, "archive")
    shutil.rmtree(archive, ignore_errors=True)
    subprocess.run([opbench, "archive", archive, first, second], check=True, capture_output=True)
    report = os.path.join(work, "report2.html")
    rep = subprocess.run([opbench, "report", first, second, "--history", archive, "-o", report, "--force"],
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    html = open(report, encoding="utf-8").read()
    assert "http" not in html and "<script src" not in html and "<link" not in html, "report is not self-contained"
    assert html.index('id="comparison"') < html.index('id="contexts"'), "the page does not open with the comparison"
    cases = len({b["run_name"] for b in json.load(open(first))["benchmarks"] if b.get("run_type") == "iteration"})
    # The inline script, driven in the browser: filter the verdict table to
    # "fused", then sort it by ratio; the page records what it shows.
    probe = report.replace(".html", "-probe.html")
    open(probe, "w", encoding="utf-8").write(html.replace("</body>", """<script>
var f = document.querySelector('input.filter'); f.value = 'fused'; f.dispatchEvent(new Event('input'));
var rows = Array.from(document.querySelectorAll('#verdicts-1 tr')).slice(1);
document.body.dataset.visible = rows.filter(function (r) { return r.style.display !== 'none'; }).length;
var th = Array.from(document.querySelectorAll('#verdicts-1 th')).find(function (t) { return t.textContent === 'ratio'; });
th.click();
var col = Array.from(document.querySelectorAll('#verdicts-1 th')).indexOf(th);
var r = Array.from(document.querySelectorAll('#verdicts-1 tr')).slice(1).map(function (t) { return t.cells[col].dataset.v; })
  .filter(function (v) { return v !== undefined; }).map(parseFloat);
document.body.dataset.sorted = String(r.every(function (v, i) { return i === 0 || r[i - 1] <= v; })) + ':' + r.length;
</script></body>"""))
    dom = run_browser(browser, ["--dump-dom", "file://" + os.path.abspath(probe)])
    assert dom.returncode == 0, dom.stderr[-2000:]
    charts = re.findall(r'<svg class="chart[^"]*" data-chart="([a-z-]+)"', dom.stdout)
    print("two-set charts:", {k: charts.count(k) for k in set(charts)})
    assert charts.count("ratio") == 1, "no ratio chart"
    assert charts.count("box") == cases, f"{charts.count('box')} box plots for {cases} cases"
    assert charts.count("history") == cases, f"{charts.count('history')} history charts for {cases} cases"
    visible = int(re.search(r'data-visible="(\d+)"', dom.stdout).group(1))
    fused = sum(1 for b in json.load(open(first))["benchmarks"]
                if b.get("run_type") == "iteration" and b.get("repetition_index", 0) == 0 and b.get("variant") == "fused")
    print(f"filter 'fused': {visible} rows shown ({fused} fused cases)")
    assert visible == fused, "the filter did not keep exactly the fused rows"
    sorted_ok = re.search(r'data-sorted="([a-z]+):(\d+)"', dom.stdout)
    assert sorted_ok and sorted_ok.group(1) == "true" and int(sorted_ok.group(2)) > 0, "sorting by ratio failed"
    for width in (800, 1400):
        shot = os.path.join(work, f"report2-{width}.png")
        r = run_browser(browser, [f"--window-size={width},2000", "--screenshot=" + shot, "file://" + os.path.abspath(report)])
        assert r.returncode == 0 and os.path.exists(shot), r.stderr[-2000:]
        w, h, channels, rows = png_pixels(shot)
        assert w == width, (w, width)
        # The comparison's ratio chart is painted within the window, in its
        # verdict colours. Which verdicts two real runs get depends on the
        # machine's load, so any of same, faster, slower or noisy will do.
        colours = {bytes(row[x:x + 3]) for row in rows[::3] for x in range(0, w * channels, channels * 3)}
        near = lambda rgb: any(abs(c[0] - rgb[0]) + abs(c[1] - rgb[1]) + abs(c[2] - rgb[2]) < 30 for c in colours)
        verdict_colours = [(0x00, 0x72, 0xB2), (0x00, 0x9E, 0x73), (0xD5, 0x5E, 0x00), (0xE6, 0x9F, 0x00)]
        assert any(near(rgb) for rgb in verdict_colours), f"no ratio point painted at {width} px"
        print(f"screenshot {shot}: {w}x{h}")
        probe_widths(browser, report, work, f"report2-{width}", width, two_sets=True)


PROBE = """<script>
var W = window.innerWidth, out = {width: W};
var box = function (e) { return e.getBoundingClientRect(); };
var inView = function (e) { var r = box(e); return r.width > 0 && r.left >= -0.5 && r.right <= W + 0.5; };
var cells = Array.from(document.querySelectorAll('table.verdicts td.verdict, table.verdicts td.ratio'));
out.cells = cells.length;
out.cells_out = cells.filter(function (c) { return !inView(c); }).map(function (c) { return c.textContent; });
out.level_out = Array.from(document.querySelectorAll('#levels table td')).filter(function (c) { return !inView(c); }).length;
out.xy_out = Array.from(document.querySelectorAll('svg.chart[viewBox]')).filter(function (c) { return !inView(c); }).map(
  function (c) { return c.dataset.chart + ' ' + Math.round(box(c).right); });
out.row_heights = Array.from(document.querySelectorAll('table.verdicts tr')).map(function (r) { return box(r).height; });
out.plots = Array.from(document.querySelectorAll('.bars svg.chart')).map(function (s) {
  return [s.dataset.chart, box(s).width, box(s).right]; });
out.labels = Array.from(document.querySelectorAll('svg.chart-labels')).map(function (s) {
  return Array.from(s.querySelectorAll('text')).map(function (t) { return [t.lastChild.textContent, box(t).left]; }); });
out.box_titles = Array.from(document.querySelectorAll('svg[data-chart=box] > text[font-weight=bold]')).map(function (t) {
  return t.textContent; });
out.ratios = Array.from(document.querySelectorAll('table.verdicts td.ratio')).map(function (c) { return c.textContent; });
out.heads = Array.from(document.querySelectorAll('table.verdicts th')).map(function (t) { return t.textContent; });
out.bars_not_clean = Array.from(document.querySelectorAll('rect.bar')).filter(function (b) {
  return / \\((noisy|disturbed)/.test(b.textContent); }).length;
out.bars_marked = document.querySelectorAll('rect.bar[data-quality]').length;
out.mark_words = document.querySelectorAll('text.mark').length;
document.body.dataset.probe = JSON.stringify(out);
</script></body>"""


def three_significant(text):
    """'-', or a ratio with three significant digits: 0.00123, 0.980, 12.3, 1578."""
    if text == "-":
        return True
    if not re.fullmatch(r"\d+(\.\d+)?", text) or float(text) == 0:
        return False
    if float(text) >= 100:
        return "." not in text
    return len(text.replace(".", "").lstrip("0")) == 3


def probe_widths(browser, report, work, name, width, two_sets):
    """Render `report` at `width` px: a screenshot kept in WORKDIR (to look
    at) and the probe's measurements of what the reader sees, asserted."""
    page = open(report, encoding="utf-8").read()
    probe = os.path.join(work, name + "-probe.html")
    open(probe, "w", encoding="utf-8").write(page.replace("</body>", PROBE))
    dom = run_browser(browser, [f"--window-size={width},2000", "--dump-dom", "file://" + os.path.abspath(probe)])
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert found, "the probe script did not run"
    got = json.loads(htmllib.unescape(found.group(1)))
    assert got["width"] == width, f"the page was laid out at {got['width']} px, not {width}"
    shot = os.path.join(work, name + ".png")
    r = run_browser(browser, [f"--window-size={width},2400", "--screenshot=" + shot, "file://" + os.path.abspath(report)])
    assert r.returncode == 0 and os.path.exists(shot), r.stderr[-2000:]
    print(f"{name}: {width} px, {got['cells']} verdict/ratio cells, tallest row "
          f"{max(got['row_heights'] or [0]):.0f} px, plots {[(k, round(w)) for k, w, _ in got['plots']]}, "
          f"{got['bars_marked']} bars marked of {got['bars_not_clean']} not clean; screenshot {shot}")
    # Verdict and ratio on screen, rows a few lines tall (reasons fold away).
    assert not got["cells_out"], f"at {width} px verdict/ratio cells outside the window: {got['cells_out'][:5]}"
    assert got["level_out"] == 0, f"at {width} px {got['level_out']} level-table cells are outside the window"
    # x-y charts (roofline, sweeps, boxes, history) fit the window, legend included.
    assert not got["xy_out"], f"at {width} px charts run past the window: {got['xy_out'][:4]}"
    assert all(h <= 80 for h in got["row_heights"]), f"a verdict row is {max(got['row_heights'])} px tall"
    if two_sets:
        assert got["cells"] > 0, "no verdict table"
        assert "quality" in got["heads"], f"no quality column: {got['heads']}"
        for t in got["ratios"]:
            assert three_significant(t), f"ratio {t!r} is not three significant digits"
    # The bar and ratio charts reach the page's right side at any width.
    assert got["plots"], "no bar or ratio chart"
    for kind, w, right in got["plots"]:
        assert right >= 0.85 * width and right <= width, f"{kind} chart ends at {right:.0f} px of {width}"
        assert w >= (0.5 if width >= 1400 else 0.3) * width, f"{kind} chart {w:.0f} px wide at {width} px"
    # Labels: unique within each chart, none cut off at the left edge.
    for labels in got["labels"]:
        texts = [t for t, _ in labels]
        dupes = {t for t in texts if texts.count(t) > 1}
        assert not dupes, f"labels read alike: {sorted(dupes)[:3]}"
        assert all(left >= 0 for _, left in labels), f"a label starts left of the page at {width} px"
    titles = got["box_titles"]
    assert len(set(titles)) == len(titles), "two distribution charts have the same title"
    # Quality is said in words on the bars, not by colour alone.
    assert got["bars_marked"] == got["bars_not_clean"] == got["mark_words"], (
        f"{got['bars_not_clean']} bars not clean, {got['bars_marked']} marked, {got['mark_words']} words")


if __name__ == "__main__":
    sys.exit(main())
