#!/bin/sh
# Stacks deeper than what a capture keeps still reach the user's code.  A
# Python program calls a package under site-packages (fakelib) that
# recurses 150 Python frames deep, more than the 128 a capture keeps, then
# calls through ctypes into the package's native extension, which nests 45
# native frames before cudaMalloc, more than stack_depth's 32.  With
# default options the report keeps the innermost and the outermost frames
# of each, records each cut with how many frames it left out, and the
# summary names the user's line first.  A native program recursing past
# stack_depth keeps main as well.
. "$srcdir/tests/reader/defs.sh"
PYTHON=/usr/bin/python3.11
if [ ! -x "$PYTHON" ]; then
  echo "1..0 # SKIP $PYTHON is not installed"
  exit 0
fi

SITE=$tmp/venv/lib/python3.11/site-packages
mkdir -p "$SITE/fakelib"
cp "$top_builddir/tests/reader/prog/.libs/libdeepnat.so" "$SITE/fakelib/_C.so"
cat >"$SITE/fakelib/__init__.py" <<'EOF'
import ctypes
import os

_C = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "_C.so"))
_C.deepnat_alloc.argtypes = [ctypes.c_int, ctypes.c_size_t,
                             ctypes.POINTER(ctypes.c_void_p)]


def layer(n, size):
    if n == 0:
        p = ctypes.c_void_p()
        assert _C.deepnat_alloc(45, size, ctypes.byref(p)) == 0  # @alloc
        return p.value
    return layer(n - 1, size)  # @layer


class Linear:
    def forward(self, size):
        return layer(150, size)  # @forward
EOF
cat >"$tmp/train.py" <<EOF
import sys
sys.path.insert(0, "$SITE")
import fakelib

keep = []


def train_step(model, size):
    keep.append(model.forward(size))  # @train_step


def main():
    model = fakelib.Linear()
    for size in (1 << 20, 2 << 20):
        train_step(model, size)  # @main


main()  # @module
EOF
at() {
  grep -n "# @$2\$" "$1" | cut -d: -f1
}
T=$(at "$tmp/train.py" train_step) M=$(at "$tmp/train.py" main)
U=$(at "$tmp/train.py" module) F=$(at "$SITE/fakelib/__init__.py" forward)

hguard "--report $tmp/a.json" "$PYTHON" "$tmp/train.py"
is "$rc" 0 "the program runs"
validate "$tmp/a.json"

# The report: one stack, cut twice, each cut counted.
is "$(q "$tmp/a.json" '[(c["lang"], c["frames"] is not None and c["frames"] > 0) for s in r["stacks"] for c in s["cuts"]]')" \
  "[('native', True), ('python', True)]" \
  "a native cut and a Python cut, each with its count"
is "$(q "$tmp/a.json" '[r["frames"][f]["function"] for f in r["stacks"][0]["frames"] if r["frames"][f].get("lang")][-4:]')" \
  "['Linear.forward', 'train_step', 'main', '<module>']" \
  "the outermost Python frames are kept: the user's, down to <module>"
is "$(q "$tmp/a.json" 'sum(1 for f in r["stacks"][0]["frames"] if r["frames"][f].get("lang"))')" \
  128 "128 Python frames kept"
is "$(q "$tmp/a.json" '[c["frames"] for c in r["stacks"][0]["cuts"] if c["lang"] == "python"][0]')" \
  "$((151 + 4 - 128))" "the Python cut counts the frames it left out (151 layers and 4 more)"
is "$(q "$tmp/a.json" '[r["frames"][f]["module"] is not None and r["modules"][r["frames"][f]["module"]]["path"].endswith("/fakelib/_C.so") for f in r["stacks"][0]["frames"][:24]].count(True)')" \
  "$((32 * 3 / 4 - 1))" "the innermost native frames are kept: cudaMalloc, then the extension's path down"

tool "$tmp/a.json"
sed -n '/^Leaked/,/^$/p' "$tmp/out" >"$tmp/group"
is "$(sed -n 2p "$tmp/group")" \
  "  train_step (train.py:$T) > Linear.forward (fakelib/__init__.py:$F)" \
  "the title: the user's line, then the library call it made"
is "$(grep -c "^    #[0-9]* train_step ($tmp/train.py:$T)\$" "$tmp/group")/$(grep -c "^    #[0-9]* main ($tmp/train.py:$M)\$" "$tmp/group")/$(grep -c "^    #[0-9]* <module> ($tmp/train.py:$U)\$" "$tmp/group")" \
  1/1/1 "the user's frames, the outermost included, are listed"
is "$(grep -Ec '^    \.\.\. [0-9]+ native frames not recorded here$' "$tmp/group")/$(grep -Ec '^    \.\.\. [0-9]+ Python frames not recorded here$' "$tmp/group")" \
  1/1 "each cut is said where it is"
is "$(grep -Ec '^    #[0-9]+ (descend|layer) ' "$tmp/group")" 0 \
  "the library's frames fold, the cuts apart"

tool --all-frames "$tmp/a.json"
is "$(grep -c '^    #[0-9]* descend' "$tmp/out")/$(grep -c '^    \.\.\. .* not recorded here$' "$tmp/out")" \
  "$((32 * 3 / 4 - 1))/2" "--all-frames: every recorded frame, and the cuts"

tool folded "$tmp/a.json"
is "$(grep -c ';<module> (train.py:[0-9]*);main .*;\[27 Python frames not recorded\];.*;\[[0-9]* native frames not recorded\];descend [^;]*;.*;cudaMalloc [0-9]*$' "$tmp/out")" \
  1 "folded: the cuts as frames where they were"

# A native program: main and its callers are kept under a deep recursion.
hguard "--report $tmp/n.json" "$SIM/app_driver" deep 50 1M
validate "$tmp/n.json"
is "$(q "$tmp/n.json" '(r["stacks"][0]["truncated"], r["stacks"][0]["cuts"])')" \
  "(True, [{'at': 24, 'frames': $(q "$tmp/n.json" 'r["stacks"][0]["cuts"][0]["frames"]'), 'lang': 'native'}])" \
  "stack_depth 32: 24 innermost frames, the cut, 8 outermost"
tool "$tmp/n.json"
is "$(grep -c '^    #[0-9]* app_main (app.c:[0-9]*)$' "$tmp/out")" 1 \
  "the program's outermost function is listed"
hguard "--report $tmp/n.json --stack-depth 4" "$SIM/app_driver" deep 50 1M
is "$(q "$tmp/n.json" '(len(r["stacks"][0]["frames"]), r["stacks"][0]["cuts"][0]["at"])')" \
  "(4, 3)" "stack_depth 4: 3 innermost and the outermost"

done_testing
