"""The README as a newcomer reads it: its code fences balance, it points
at nothing outside the repository, every file path it names exists, its
file table names every source file, and its quick start runs as
written."""
import os
import re
import subprocess

from hg import ROOT, BUILD

README = os.path.join(ROOT, "README.md")


def blocks(text):
    """(info string, body) of every fenced block; asserts that each fence
    that opens one is closed."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^(```+)(.*)$", lines[i])
        i += 1
        if not m:
            continue
        body = []
        while i < len(lines) and lines[i] != m.group(1):
            assert not re.match(r"^```+\S", lines[i]), f"a fence opens inside a block: line {i + 1}"
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"the block opened at line {i - len(body)} is never closed"
        i += 1
        out.append((m.group(2).strip(), "\n".join(body)))
    return out


def test_fences_balance_and_nothing_points_outside():
    text = open(README).read()
    assert len(blocks(text)) > 10
    assert "../" not in text and "DESIGN" not in text
    for doc in ("README.md", "BENCHMARKS.md"):
        for path in re.findall(r"\(([\w./-]+\.md)\)", open(os.path.join(ROOT, doc)).read()):
            assert os.path.exists(os.path.join(ROOT, path)), (doc, path)


SOURCE_DIRS = ("fastpath", "slowpath", "libclient", "policy", "proto", "bpf", "common",
               "tools")
SOURCE_EXT = (".c", ".h", ".S", ".proto", ".py", ".sh")


def test_the_file_table_names_every_source_file():
    text = open(README).read()
    missing = [os.path.join(d, f) for d in SOURCE_DIRS
               for f in sorted(os.listdir(os.path.join(ROOT, d)))
               if f.endswith(SOURCE_EXT) and f"`{f}`" not in text]
    assert not missing, f"not in README.md's file table: {missing}"


def text_files():
    """Every tracked text file but the fuzz seeds: (path, text)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                           text=True).stdout.split()
    for f in files:
        path = os.path.join(ROOT, f)
        if f.startswith("tests/fuzz/seeds/") or not os.path.isfile(path):
            continue
        try:
            yield f, open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue


def test_every_design_reference_names_a_section():
    """Code, tests and documents cite docs/design.md by section; each cited
    section exists, and nothing cites a document the repository lacks."""
    design = open(os.path.join(ROOT, "docs", "design.md")).read()
    sections = set(re.findall(r"^## (\d+)\. ", design, re.M))
    bad = []
    for f, text in text_files():
        bad += [(f, f"DESIGN §{n}") for n in re.findall(r"DESIGN §(\d+)", text)]
        bad += [(f, f"design.md §{n}") for n in re.findall(r"design\.md §(\d+)", text)
                if n not in sections]
    assert len(sections) >= 12 and not bad, bad


def test_nothing_cites_a_tracker_or_a_missing_file():
    """The repository stands alone: no "issue N" of a tracker a reader
    lacks, and every C file a comment or document names (a removed file
    was once named long after it was gone) is in the repository; absolute
    paths (system headers) and protoc's generated files aside. In C, only
    the comments are read (a struct member `c` is code)."""
    names = {os.path.basename(f) for f, _ in text_files()}
    bad = []
    for f, text in text_files():
        bad += [(f, m) for m in re.findall(r"\b[Ii]ssues? #?\d+", text)]
        if f.endswith((".c", ".h")):
            text = "\n".join(re.findall(r"/\*.*?\*/|//[^\n]*", text, re.S))
        for m in re.findall(r"(?<![\w<\"/.-])([\w][\w/.-]*\.[ch])(?![\w.])", text):
            if ".pb-c." not in m and os.path.basename(m) not in names:
                bad.append((f, m))
    assert not bad, bad


def test_the_quick_start_runs_as_written():
    text = open(README).read()
    quick = text[text.index("## Quick start, by hand"):]
    (info, script), = blocks(quick)[:1]
    assert info == "sh" and len(script.splitlines()) <= 40
    # build/ is the README's; the test runs against the build under test
    script = script.replace("build/bin/", os.path.join(BUILD, "bin") + "/")
    try:
        r = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    finally:
        # each its own command: a shell whose command line holds the
        # pattern was pkill's first match, and killed, it never removed
        # the namespace of a run that failed
        for cmd in (["pkill", "-f", "iface=hgq0"], ["ip", "netns", "del", "hgq"],
                    ["ip", "link", "del", "hgq0"]):
            subprocess.run(cmd, capture_output=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "gold" in r.stdout and "bronze" in r.stdout
    sent, received, lost = map(int, re.search(r"^all\s+(\d+)\s+(\d+)\s+(\d+)", r.stdout,
                                               re.M).groups())
    assert sent > 1500 and received == sent and lost == 0, r.stdout
