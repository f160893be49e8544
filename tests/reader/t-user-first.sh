#!/bin/sh
# The user's frame first: a Python program whose allocations go through a
# package installed under a site-packages directory (fakelib, thirteen
# frames deep, then ctypes into the CUDA runtime).  By default each group's
# title names the user's line and the library call it made, the library's
# frames fold into one line but for that call, the interpreter's frames
# between Python frames are left out, and the stacks that read the same
# are one group, and one line at the peak.  --all-frames shows everything; --user and
# --library move code from one side to the other.
. "$srcdir/tests/reader/defs.sh"
PYTHON=/usr/bin/python3.11
if [ ! -x "$PYTHON" ]; then
  echo "1..0 # SKIP $PYTHON is not installed"
  exit 0
fi

SITE=$tmp/venv/lib/python3.11/site-packages
mkdir -p "$SITE/fakelib"
cat >"$SITE/fakelib/__init__.py" <<'EOF'
import ctypes

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]


def layer(n, size):
    if n == 0:
        p = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(p), size) == 0  # @alloc
        return p.value
    return layer(n - 1, size)  # @layer


class Linear:
    def forward(self, size):
        return layer(12 if size != 2 << 20 else 11, size)  # @forward
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
    for size in (1 << 20, 2 << 20, 3 << 20):
        train_step(model, size)  # @main


main()  # @module
EOF
at() {
  grep -n "# @$2\$" "$1" | cut -d: -f1
}
T=$(at "$tmp/train.py" train_step) M=$(at "$tmp/train.py" main)
F=$(at "$SITE/fakelib/__init__.py" forward)
L=$(at "$SITE/fakelib/__init__.py" layer)

hguard "--report $tmp/a.json" "$PYTHON" "$tmp/train.py"
is "$rc" 0 "the program runs"
validate "$tmp/a.json"

tool "$tmp/a.json"
is "$(grep -c '^Leaked 6.0 MiB in 3 allocations, 2 stacks (cudaMalloc, device 0) from:$' "$tmp/out")/$(grep -c '^Leaked' "$tmp/out")" 1/1 \
  "two stacks (one a frame shallower) that read the same: one group, saying so"
sed -n '/^Leaked/,/^$/p' "$tmp/out" >"$tmp/group"
is "$(sed -n 2p "$tmp/group")" \
  "  train_step (train.py:$T) > Linear.forward (fakelib/__init__.py:$F)" \
  "the title: the user's line, then the library call it made"
is "$(grep -c '^    \.\.\. [0-9]* frames in .*fakelib' "$tmp/group")" 1 \
  "the library's frames fold into one line naming its package"
is "$(grep -c "^    #[0-9]* Linear.forward (.*fakelib/__init__.py:$F)\$" "$tmp/group")" 1 \
  "but for the call the user's code made"
is "$(grep -c "^    #[0-9]* train_step ($tmp/train.py:$T)\$" "$tmp/group")/$(grep -c "^    #[0-9]* main ($tmp/train.py:$M)\$" "$tmp/group")" \
  1/1 "the user's own frames are all shown"
is "$(grep -Ec '^    #[0-9]+ (layer |_PyEval|PyObject_|.*\(python3\.11)' "$tmp/group")" 0 \
  "no library or interpreter frame is listed one by one"
is "$(grep -c "^    6.0 MiB in 3 allocations, 2 stacks: train_step (train.py:$T) > Linear.forward (fakelib/__init__.py:$F)\$" "$tmp/out")" 1 \
  "the peak's line: the same title"

tool --all-frames "$tmp/a.json"
is "$(grep -c "^    #[0-9]* layer (.*fakelib/__init__.py:$L)\$" "$tmp/out")/$(grep -c '^Leaked' "$tmp/out")" 23/2 \
  "--all-frames: every frame, the library's too, and the two stacks apart"
is "$(grep -c '^    \.\.\. ' "$tmp/out")" 0 "--all-frames: nothing folded"

tool --user '*/fakelib/*' "$tmp/a.json"
is "$(sed -n '/^Leaked/,/^$/p' "$tmp/out" | sed -n 2p | cut -d'>' -f1)" \
  "  layer (fakelib/__init__.py:$(at "$SITE/fakelib/__init__.py" alloc)) " \
  "--user GLOB: the package is the user's code, its innermost line first"
tool --library "$tmp/train.py" "$tmp/a.json"
is "$(grep -c '^  [^ ].* > ' "$tmp/out")" 0 \
  "--library GLOB: no frame is the user's, no title, nothing folded"

# A stack with no frame of the user's is not folded to nothing.
hguard "--report $tmp/c.json" "$top_builddir/tests/reader/prog/symprog"
tool --library '*/symprog' "$tmp/c.json"
is "$(grep -c '^    #[0-9]* gpu::Pool<float>::grab' "$tmp/out")/$(grep -c '^    \.\.\.' "$tmp/out")" \
  3/0 "a stack all of libraries: shown as it is"

done_testing
