"""Every warning template in src/ and the warnings of --batch documents: none is cut.

  warnings_whole.py bound SRC_DIR MODEL_H
      The longest text each Warnings_add / Warnings_add_about template can make (its literal
      text, each conversion at its widest: %d 11 characters, %zu 20, %g 13, a %s WIDEST_STRING)
      plus the widest prefix and suffix a warning gains when it is copied (COPY_MARGIN: the
      "[init NAME] " of the screen's init comparison, the role a ROLE_MARK stands for, the
      " (from layer N)" of LAYER_MARK) must fit WARNING_LENGTH - 1 bytes.
  warnings_whole.py match SRC_DIR DOC.json...
      Each warning of each document (every "warnings" list, at any depth) matches a
      template whole: its last literal words are there, so it was not cut.
"""
import json
import re
import sys
from pathlib import Path

WIDEST = {"d": 11, "zu": 20, "g": 13, "e": 13, "f": 4, "s": 200}
WIDEST_STRING = WIDEST["s"]
COPY_MARGIN = 64
CONVERSION = re.compile(r"%(?:[-+ #0]*)(?:\d+|\*)?(?:\.(?:\d+|\*))?(zu|d|g|e|f|s|%)")
MARKS = {"ROLE_MARK": "\x01", "LAYER_MARK": "\x02"}


def templates(src):
    """(file:line, format) of every Warnings_add(_about) call: its adjacent string literals
    and marks after the warnings (and subject) arguments."""
    found = []
    for path in sorted(Path(src).rglob("*.c")):
        text = path.read_text()
        for call in re.finditer(r"\bWarnings_add(_about)?\(", text):
            args, depth, start, i = [], 0, call.end(), call.end()
            while True:
                ch = text[i]
                if ch == '"':
                    i += 1
                    while text[i] != '"':
                        i += 2 if text[i] == "\\" else 1
                elif ch in "([{":
                    depth += 1
                elif ch in ")]}" and depth > 0:
                    depth -= 1
                elif (ch == "," and depth == 0) or ch == ")":
                    args.append(text[start:i])
                    start = i + 1
                    if ch == ")":
                        break
                i += 1
            if "..." in args[0] or "const char *fmt" in args[0]:
                continue  # the definitions themselves
            fmt_arg = args[2] if call.group(1) else args[1]
            parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\b(ROLE_MARK|LAYER_MARK)\b', fmt_arg)
            fmt = "".join(MARKS[m] if m else s.encode().decode("unicode_escape").encode(
                "latin-1").decode() for s, m in parts)
            line = text.count("\n", 0, call.start()) + 1
            found.append((f"{path}:{line}", fmt))
    return found


def copies(fmt):
    """A template that only copies another warning (its text through a %s)."""
    literal = CONVERSION.sub("", fmt).replace("%.*s", "")
    return re.fullmatch(r"[\x01\x02]?|\[init \] | \(from layer \)", literal) is not None


def widest(fmt):
    total = len(CONVERSION.sub("", fmt).replace("%%", "%").encode())
    for kind in CONVERSION.findall(fmt):
        total += 1 if kind == "%" else WIDEST[kind]
    return total


def bound(src, model_h):
    length = int(re.search(r"WARNING_LENGTH\s*=\s*(\d+)", Path(model_h).read_text()).group(1))
    bad = 0
    for where, fmt in templates(src):
        if copies(fmt):
            continue
        need = widest(fmt) + COPY_MARGIN
        if need > length - 1:
            print(f"{where}: a warning may need {need} bytes, WARNING_LENGTH is {length}:"
                  f" {fmt[:60]!r}…")
            bad += 1
    return bad


def pattern(fmt):
    out, pos = "", 0
    for m in re.finditer(r"%\.\*s|" + CONVERSION.pattern + r"|[\x01\x02]", fmt):
        out += re.escape(fmt[pos:m.start()])
        out += "%" if m.group(0) == "%%" else "" if m.group(0) == "\x02" else ".*?"
        pos = m.end()
    return out + re.escape(fmt[pos:])


def warnings_of(doc):
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "warnings" and isinstance(value, list):
                yield from value
            else:
                yield from warnings_of(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from warnings_of(value)


def match(src, docs):
    whole = [re.compile(r"(?:\[init \w+\] )?" + pattern(fmt) + r"(?: \(from layer \d+\))?",
                        re.S)
             for _, fmt in templates(src) if not copies(fmt)]
    bad = 0
    for doc in docs:
        for text in warnings_of(json.loads(Path(doc).read_text())):
            if not any(w.fullmatch(text) for w in whole):
                print(f"{doc}: matches no template whole (cut?): …{text[-60:]!r}")
                bad += 1
    return bad


if __name__ == "__main__":
    what = sys.argv[1]
    bad = bound(sys.argv[2], sys.argv[3]) if what == "bound" else match(sys.argv[2], sys.argv[3:])
    sys.exit(1 if bad else 0)
