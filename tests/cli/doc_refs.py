"""Every "docs/model.md §N" that a reader follows names a section that exists, and a
reference whose clause names one of TOPICS points to a section whose title (with its
subsections' titles) holds that word: "which `merge` combines exactly (docs/model.md §8)"
fails, since §8 is the conditioning and the merge is §6.  Inside docs/model.md, "(§N)"
references are checked for existence too.

And no shipped text names a file outside the repository: every file name ending in .md, and
every path that starts at one of the repository's own folders (docs/, presets/, src/, ...), in
the README, docs/, the man page, the presets, the program's and the tests' sources and --help
(of the binary $BIN, when set) is a file of the repository.  A clone has no BLOCKS.md beside
it; a source of another project is named with its project ("transformers' modeling_olmo2.py"),
and a path inside another project ("allenai/OLMo-core src/olmo_core/...") with that project on
its line.  Prints each failure; exit 1 when any."""
import glob
import os
import re
import subprocess
import sys

SECTION = r"§([0-9](?:[0-9a-z.]*[0-9a-z])?)"
REFERENCE = re.compile(r"docs/model\.md,?\s+((?:§[0-9](?:[0-9a-z.]*[0-9a-z])?(?:,\s*|\s+and\s+)?)+)")
# Words that, in the clause around a reference, say which section it must be.
TOPICS = ("merge", "conditioning", "cost", "initialisation")
CLAUSE_END = re.compile(r"[.;(|\n]")

headings = {}
for line in open("docs/model.md", encoding="utf-8"):
    m = re.match(r"#{2,3} (\d+(?:\.\d+)?[a-z]?)\.? (.*)", line)
    if m:
        headings[m.group(1)] = m.group(2)


def title(section):
    """The section's heading and, for a top-level one, its subsections' headings."""
    return " ".join(t for n, t in headings.items()
                    if n == section or ("." not in section and n.startswith(section + "."))).lower()


def clause(text, start, end):
    """The words of the clause a reference stands in: back to the last delimiter before it
    (skipping its own opening parenthesis) and on to the next after it."""
    before = text[:start].rstrip(" (")
    cut = max((m.end() for m in CLAUSE_END.finditer(before, max(0, len(before) - 300))), default=0)
    after = CLAUSE_END.search(text, end)
    return (before[cut:] + " " + text[end:after.start() if after else len(text)]).lower()


failures = 0
files = (["README.md", "attnscope.1"] + sorted(glob.glob("docs/*.md")) +
         sorted(glob.glob("presets/*.preset")) + sorted(glob.glob("presets/tour/*.preset")) +
         sorted(glob.glob("src/*/*.[ch]")) + sorted(glob.glob("include/attnscope/*.h")))
for path in files:
    text = open(path, encoding="utf-8").read()
    for m in REFERENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        sections = re.findall(SECTION, m.group(1))
        for s in sections:
            if s not in headings:
                print(f"  {path}:{line}: docs/model.md §{s} does not exist")
                failures += 1
        titles = " ".join(title(s) for s in sections)
        for word in TOPICS:
            if word in clause(text, m.start(), m.end()) and word not in titles:
                print(f"  {path}:{line}: names '{word}' beside docs/model.md "
                      f"{', '.join('§' + s for s in sections)}, whose title does not: {titles}")
                failures += 1
model = open("docs/model.md", encoding="utf-8").read()
for m in re.finditer(r"\(((?:§[0-9][^)]*))\)", model):
    for s in re.findall(SECTION, m.group(1)):
        if s not in headings:
            print(f"  docs/model.md:{model.count(chr(10), 0, m.start()) + 1}: §{s} does not exist")
            failures += 1

# The repository's own files, by path and by name (a file named alone is one of them anywhere).
OWN = set()
for root, dirs, names in os.walk("."):
    dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
    for n in names:
        OWN.add(os.path.normpath(os.path.join(root, n)))
OWN_NAMES = {os.path.basename(p) for p in OWN}
TOP = sorted({p.split(os.sep)[0] for p in OWN if os.sep in p})
PATH = re.compile(r"(?<![\w./-])((?:%s)/[A-Za-z0-9_./*…-]*[A-Za-z0-9_*…])" % "|".join(map(re.escape, TOP)))
MARKDOWN = re.compile(r"(?<![\w/-])([A-Za-z0-9_./-]*[A-Za-z0-9_]\.md)\b")
# Projects whose own files a text may name on the same line (their paths are not ours).
OUTSIDE_PROJECTS = re.compile(r"OLMo-core|olmo_core|transformers|huggingface|llama-models")
PLACEHOLDER = re.compile(r"[A-Z]{2,}|\*|…")

shipped = (["README.md", "attnscope.1"] + sorted(glob.glob("docs/*.md")) +
           sorted(glob.glob("presets/*.preset")) + sorted(glob.glob("presets/tour/*.preset")) +
           sorted(glob.glob("src/*/*.[ch]")) + sorted(glob.glob("include/attnscope/*.h")) +
           sorted(glob.glob("tests/*.[ch]")) + sorted(glob.glob("tests/cli/*.sh")) +
           sorted(glob.glob("tests/tui/*.sh")))
texts = [(path, open(path, encoding="utf-8").read()) for path in shipped]
if os.environ.get("BIN"):
    texts.append(("--help", subprocess.run([os.environ["BIN"], "--help"], capture_output=True,
                                           text=True, check=True).stdout))
else:
    print("  --help: skipped (no BIN)")
for path, text in texts:
    for number, line in enumerate(text.split("\n"), 1):
        for m in MARKDOWN.finditer(line):
            name = m.group(1)
            if os.path.normpath(name) not in OWN and name not in OWN_NAMES:
                print(f"  {path}:{number}: names {name}, which is not in the repository")
                failures += 1
        for m in PATH.finditer(line):
            name = m.group(1).rstrip(".")
            if (os.path.normpath(name) in OWN or os.path.isdir(name) or PLACEHOLDER.search(name)
                    or os.path.normpath(name + ".preset") in OWN  # a preset by its name
                    or line[m.end():m.end() + 2].lstrip("-_")[:1] in ("{", "$")  # built in code
                    or OUTSIDE_PROJECTS.search(line)):
                continue
            print(f"  {path}:{number}: names {name}, which is not in the repository")
            failures += 1
sys.exit(1 if failures else 0)
