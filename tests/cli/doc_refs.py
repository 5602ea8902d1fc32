"""Every "docs/model.md §N" that a reader follows names a section that exists, and a
reference whose clause names one of TOPICS points to a section whose title (with its
subsections' titles) holds that word: "which `merge` combines exactly (docs/model.md §8)"
fails, since §8 is the conditioning and the merge is §6.  Inside docs/model.md, "(§N)"
references are checked for existence too.  Prints each failure; exit 1 when any."""
import glob
import re
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
sys.exit(1 if failures else 0)
