#!/bin/sh
# The options are written once, in conf_table.c's table: the launcher's help
# lists its keys from there, and this test holds the rest to it.  Every
# key is in the man page's list of CUMEMGUARD_OPTIONS; every key a user
# sets per run has a launcher flag of its name (--KEY, or --no-KEY for a
# switch that is on by default), and the keys of one device are said to
# have none; every flag of the help's usage is in the man page.  Each
# key's entry in the man page says its default and range on lines of
# their own ("Key: K." "Default: D." "Range: R."), which must be the
# table's, as --list-options prints them.
. "$srcdir/tests/lib/defs.sh"

"$LAUNCHER" --help >"$tmp/help"
"$PYTHON3" - "$tmp/help" "$srcdir/man/cumemguard.1" >"$tmp/out" <<'PY'
import re, sys
help_text = open(sys.argv[1]).read()
man = open(sys.argv[2]).read().replace("\\-", "-")
env = help_text[help_text.index("options as key=value"):]
env = env[:env.index(";")]
keys = re.findall(r"([a-z_]+)(\(\.N\))?", env.split(":", 1)[1])
flags = set(re.findall(r"\[--([a-z-]+)", help_text))
for key, dev in keys:
    flag = key.replace("_", "-")
    has = flag in flags or "no-" + flag in flags or \
        (key.startswith("no_") and flag in flags)
    print("key", key, "flag" if has else "NO FLAG",
          "man" if re.search(r"^\.B[IR]? %s\b" % key, man, re.M) else "NO MAN",
          "(.N)" if dev else "")
for flag in sorted(flags):
    print("flag", flag, "man" if re.search(r"--%s\b" % re.escape(flag), man)
          else "NO MAN")
print("devices said:", "keys of one device" in help_text and "have no flag" in help_text)
PY
cat "$tmp/out" | sed 's/^/# /'
is "$(grep -c '^key ' "$tmp/out")" 19 "the help lists the table's 19 keys"
is "$(grep -c 'NO FLAG' "$tmp/out")" 0 "each key has a launcher flag of its name"
is "$(grep -c 'NO MAN' "$tmp/out")" 0 "each key and each flag is in the man page"
is "$(grep -c '^devices said: True$' "$tmp/out")" 1 \
  "the help says why the keys of one device have no flag"
"$LAUNCHER" --snapshot 1s --no-timeline --no-signal-report --no-count-context \
  -- /usr/bin/env >"$tmp/out" 2>&1
is "$(grep '^CUMEMGUARD_OPTIONS=' "$tmp/out")" \
  "CUMEMGUARD_OPTIONS=snapshot=1s,timeline=0,signal_report=0,count_context=0" \
  "--snapshot, --no-timeline, --no-signal-report and --no-count-context set their keys"

# The man page's default and range of each key against the table's: one
# line a table entry, KEY (KEY.N for a device's) first, then what the man
# page says of the key: same, differs, or missing.
"$LAUNCHER" --list-options >"$tmp/table"
"$PYTHON3" - "$tmp/table" "$srcdir/man/cumemguard.1" >"$tmp/out" <<'PY'
import re, sys
man = open(sys.argv[2]).read()
man = re.sub(r"\\f[BIRP]", "", man).replace("\\-", "-")
entries = {}
for key, dflt, rng in re.findall(
        r"^Key: (\S+)\.\nDefault: (.*)\.\nRange: (.*)\.$", man, re.M):
    entries.setdefault(key, []).append((dflt, rng))
keys = set()
for row in open(sys.argv[1]).read().splitlines():
    name, dflt, rng = row.split("\t")
    key = name[:-2] if name.endswith(".N") else name
    keys.add(key)
    said = entries.get(key, [])
    def word(i, want):
        return "missing" if not said else \
            "same" if all(e[i] == want for e in said) else "differs"
    print(name, "default=" + word(0, dflt), "range=" + word(1, rng),
          "entries=%d" % len(said))
    for d, r in said:
        if (d, r) != (dflt, rng):
            print("# %s: the man page says default %r, range %r; the table %r, %r"
                  % (name, d, r, dflt, rng))
for key in sorted(set(entries) - keys):
    print("stray", key)
PY
sed 's/^/# /' "$tmp/out"
is "$(grep -c "" "$tmp/table")" "$(grep -c '^[a-z_.N]* default=' "$tmp/out")" \
  "each entry of --list-options is compared"
for k in $(cut -f1 "$tmp/table"); do
  is "$(at "$k" default)" same "the man page gives $k the table's default"
  is "$(at "$k" range)" same "the man page gives $k the table's range"
  is "$(at "$k" entries)" 1 "the man page has one entry for $k"
done
is "$(grep -c '^stray ' "$tmp/out")" 0 "every key the man page gives a default is the table's"

# The defaults the help states in its own words: "(default X" after a
# flag, or "X (default" for the value it names first, each the table's
# default of the flag's key.  One line a flag that states one.
"$PYTHON3" - "$tmp/help" "$tmp/table" >"$tmp/out" <<'PY'
import re, sys
help_text = open(sys.argv[1]).read()
table = dict(row.split("\t")[:2] for row in open(sys.argv[2]).read().splitlines())
for flag, text in re.findall(r"^  --([a-z-]+)[^\n]*?((?:\n?[^\n]*)(?:\n {10,}[^\n]*)*)",
                             help_text, re.M):
    m = re.search(r"(\S+) \(default[):]", text) or \
        re.search(r"\(default ([^,;)\s]+)", text)
    key = flag.replace("-", "_")
    if m is None or key not in table:
        continue
    said = m.group(1)
    print(key, "same" if said == table[key] else "differs",
          "help=%s table=%s" % (said, table[key]))
PY
sed 's/^/# /' "$tmp/out"
is "$(grep -c ' same ' "$tmp/out")" 5 \
  "the help states the defaults of five flags"
is "$(grep -c ' differs ' "$tmp/out")" 0 \
  "each default the help states is the table's"

# The defaults the guides state: "`KEY=VALUE` (default)" or "(the
# default)", and "`KEY=WORD` (default X)", each the table's default of
# KEY.  One line each, FILE:LINE first.
"$PYTHON3" - "$tmp/table" "$srcdir" >"$tmp/out" <<'PY'
import glob, os, re, sys
table = dict(row.split("\t")[:2] for row in open(sys.argv[1]).read().splitlines())
docs = sorted(glob.glob(os.path.join(sys.argv[2], "docs", "*.md")))
for name in ["README.md"] + [os.path.relpath(d, sys.argv[2]) for d in docs]:
    text = open(os.path.join(sys.argv[2], name)).read()
    for m in re.finditer(r"`([a-z_]+)=([^`]+)` \((?:the )?default(?: `?([^`)]+)`?)?\)",
                         text):
        key, value, stated = m.groups()
        said = stated if stated is not None else value
        where = "%s:%d" % (name, text.count("\n", 0, m.start()) + 1)
        if key not in table:
            print(where, key, "unknown")
        else:
            print(where, key, "same" if said == table[key] else "differs",
                  "doc=%s table=%s" % (said, table[key]))
PY
sed 's/^/# /' "$tmp/out"
[ "$(grep -c ' same ' "$tmp/out")" -ge 6 ]
tap $? "the guides state defaults of several keys ($(grep -c ' same ' "$tmp/out"))"
is "$(grep -c ' differs \| unknown$' "$tmp/out")" 0 \
  "each default a guide states is the table's, of a key the table has"

done_testing
