#!/usr/bin/python3
"""opbench report in a real browser: headless Chromium renders report.html,
its DOM (--dump-dom) must hold the expected charts, and its screenshot must
not be blank. Skipped (exit 77, which meson shows as SKIP) when Chromium is
not installed: scripts/install-deps.sh installs it.

usage: report_html_chromium_test.py OPBENCH SUITE WORKDIR
"""
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
    print(f"bars {bars}, points {points}")
    assert bars >= 6 and points >= 12, "too few bars or points"

    shot = os.path.join(work, "report.png")
    r = run_browser(browser, ["--window-size=1000,1400", "--screenshot=" + shot, "file://" + os.path.abspath(report)])
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
    two_sets(browser, opbench, suite, work, result)
    print("ok:", report, shot)
    return 0


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
var r = Array.from(document.querySelectorAll('#verdicts-1 tr')).slice(1).map(function (t) { return t.cells[5].dataset.v; })
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


if __name__ == "__main__":
    sys.exit(main())
