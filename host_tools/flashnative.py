"""Machine code where it costs no RAM: the frozen image's copy of the firmware sources.

Some functions pay for `@micropython.native` only where their machine code sits in flash (the
frozen image): on a `.mpy` deploy native code is loaded into the chip's heap (~2x its bytecode),
and on the unix port `shoectl eval` at its 64 KB heap runs out of memory with them (docs/
hardware.md section 8). The source marks such a function with one line right above its `def`
(or above its other decorators):

    # frozen: @micropython.native
    def value5(a, b, c, d, e):

`# frozen: @micropython.viper` likewise, for a function written so that it means the same as
plain Python (small non-negative ints, `int()` casts, annotations: shoe.games.hcf). CPython, the
unix port and a `.mpy` deploy read the marker as the comment it is. The frozen
image's build (tools/build_pico_firmware.sh) freezes a copy of the FIRMWARE files in which each
marker is the decorator itself (same indentation, same line numbers), and checks that copy
against this transform. One source; tests/firmware/link/test_native.py runs the transformed
copy on the unix port against CPython.

    python3 host_tools/flashnative.py stage OUT_DIR   # the copy (files written only if changed)
    transform(text) -> text;  marked(text) -> ["value5", ...];  marks(text) -> [(name, emitter)]
    native_functions(text) -> the functions decorated as machine code (in the copy: the marked)
    firmware_list(root) -> FIRMWARE of board/manifest_common.py

Standard library only: the image's build runs it with the system python3.
"""

import os
import re
import sys

MARK = "# frozen: @micropython."  # + "native" or "viper"
EMITTERS = ("native", "viper")
_LINE = re.compile(r"^([ \t]*)" + re.escape(MARK) + r"(native|viper)[ \t]*$")
_DEF = re.compile(r"^[ \t]*def (\w+)\(")
_NATIVE = re.compile(
    r"^[ \t]*@micropython\.(?:native|viper)[ \t]*\n(?:[ \t]*@.*\n)*[ \t]*def (\w+)", re.M
)


class MarkError(ValueError):
    """A marker that is not right above a function (or above that function's decorators)."""


def _scan(text):
    """-> [(line index, indentation, function name)] of every marker in text."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        m = _LINE.match(line)
        if m is None:
            if MARK in line:
                raise MarkError("line %d: the marker must stand alone on its line" % (i + 1))
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip().startswith("@"):
            j += 1
        d = _DEF.match(lines[j]) if j < len(lines) else None
        if d is None or not lines[j].startswith(m.group(1) + "def "):
            raise MarkError(
                "line %d: %r is not right above a def at its indentation" % (i + 1, line.strip())
            )
        found.append((i, m.group(1), d.group(1), m.group(2)))
    return lines, found


def marked(text):
    """The names of the functions text marks, in order."""
    return [name for _, _, name, _ in _scan(text)[1]]


def marks(text):
    """[(name, "native" or "viper")] of the functions text marks, in order."""
    return [(name, emitter) for _, _, name, emitter in _scan(text)[1]]


def native_functions(text):
    """The names of the functions text decorates with @micropython.native or .viper."""
    return _NATIVE.findall(text)


def transform(text):
    """text with each marker replaced by the decorator (line count unchanged)."""
    lines, found = _scan(text)
    for i, indent, _, emitter in found:
        lines[i] = indent + "@micropython." + emitter
    return "\n".join(lines)


def firmware_list(root):
    """FIRMWARE of root/board/manifest_common.py (the files that ship)."""
    ns = {}
    src = open(os.path.join(root, "board", "manifest_common.py")).read()
    exec(src[: src.index("metadata(")], ns)
    return ns["FIRMWARE"]


def stage(out_dir, root=None):
    """Write the FIRMWARE files, transformed, under out_dir (out_dir/shoe/...); a file whose
    content is already there is left alone (its date too: the freeze rebuilds only what
    changed). Returns {relative path: [marked names]} of the files holding markers."""
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    holding = {}
    for rel in firmware_list(root):
        with open(os.path.join(root, "firmware", rel), encoding="utf-8") as f:
            text = f.read()
        try:
            names = marked(text)
        except MarkError as e:
            raise MarkError("firmware/%s: %s" % (rel, e)) from None
        if names:
            holding[rel] = names
        new = transform(text) if names else text
        dst = os.path.join(out_dir, rel)
        try:
            with open(dst, encoding="utf-8") as f:
                if f.read() == new:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        tmp = dst + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(tmp, dst)
    return holding


def main(argv):
    if len(argv) != 3 or argv[1] != "stage":
        sys.exit("usage: flashnative.py stage OUT_DIR")
    try:
        holding = stage(argv[2])
    except MarkError as e:
        sys.exit("flashnative: %s" % e)
    n = sum(len(v) for v in holding.values())
    print(
        "flashnative: %d functions native in flash (%s)"
        % (
            n,
            ", ".join("%s: %s" % (rel, " ".join(names)) for rel, names in sorted(holding.items())),
        )
    )


if __name__ == "__main__":
    main(sys.argv)
