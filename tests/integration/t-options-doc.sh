#!/bin/sh
# The options are written once, in conf.c's table: the launcher's help
# lists its keys from there, and this test holds the rest to it.  Every
# key is in the man page's list of CUMEMGUARD_OPTIONS; every key a user
# sets per run has a launcher flag of its name (--KEY, or --no-KEY for a
# switch that is on by default), and the keys of one device are said to
# have none; every flag of the help's usage is in the man page.
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

done_testing
