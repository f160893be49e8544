#!/bin/sh
# Each leak group names the threads its allocations were made on: a thread
# that runs no Python (as PyTorch's autograd threads, pt_autograd_N) is
# known by its name, the main thread by the program's, a thread keeps the
# name it had at its first allocation, a group made on two threads lists
# both, and a forked child names its own thread.  Every report is checked
# against the schema, and the reader reads it.
. "$srcdir/tests/lib/defs.sh"
R=$tmp/r.json

# threads SITE: the threads of the group allocated in cmgtest_site_SITE.
threads() {
  q "$R" "[[(t['tid'], t['name']) for t in l['threads']] for l in r['leaks'] if 'cmgtest_site_$1' in fn(l['stack'])][0]"
}

# The main thread, a thread named as autograd's that allocates and leaks,
# and one that renames itself after its first allocation.
guard "--report $R" app_rt_shared site 1 1M \
  thread pt_autograd_0 site 2 2M endthread \
  thread cmgtest-first site 3 4M name cmgtest-later deep 3 1M endthread
is "$rc/$(val 3 rc)/$(val 7 rc)" 0/0/0 "the program and its threads ran"
validate "$R"
pid=$(q "$R" 'r["process"]["pid"]')
# Under a tool that runs the program itself (valgrind), the main thread
# bears the tool's name, as the kernel shows it.
if [ -z "${CMG_TEST_PREFIX:-}" ]; then
  is "$(threads 1)" "[($pid, 'app_rt_shared')]" \
    "the main thread: its tid is the pid, its name the program's"
else
  is "$(threads 1 | sed "s/^\[($pid, '[^']*')\]\$/ok/")" ok \
    "the main thread: its tid is the pid, and it is named"
fi
is "$(q "$R" "[l['threads'][0]['name'] for l in r['leaks'] if 'cmgtest_site_2' in fn(l['stack'])]")" \
  "['pt_autograd_0']" "a thread that leaked is named in its group"
autograd=$(q "$R" "[l['threads'][0]['tid'] for l in r['leaks'] if 'cmgtest_site_2' in fn(l['stack'])][0]")
is "$(q "$R" "sorted({a['thread'] for l in r['leaks'] if 'cmgtest_site_2' in fn(l['stack']) for a in l['allocations']})")" \
  "[$autograd]" "its tid is that of the group's allocations"
tap "$([ "$autograd" != "$pid" ]; echo $?)" "a thread of its own"
is "$(q "$R" "[any(r['frames'][i].get('lang') == 'python' for i in stacks[l['stack']]['frames']) for l in r['leaks'] if 'cmgtest_site_2' in fn(l['stack'])]")" \
  "[False]" "its stack has no Python frame: only the name says where it ran"
is "$(threads 3)" "$(q "$R" "[[(t['tid'], t['name']) for t in l['threads']] for l in r['leaks'] if 'cmgtest_deep' in fn(l['stack'])][0]")" \
  "a thread's allocations after it renamed itself: the same thread"
is "$(q "$R" "sorted({t['name'] for l in r['leaks'] if 'cmgtest_site_3' in fn(l['stack']) or 'cmgtest_deep' in fn(l['stack']) for t in l['threads']})")" \
  "['cmgtest-first']" "the name it had at its first allocation is kept"
tool=${CMG_TOOL:-$top_builddir/cumemguard-report}
"$tool" "$R" >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "cumemguard-report reads it"

# --json, of one report and of two merged: each group's threads, with the
# index of their report in sources[].
guard "--report $tmp/m1.json" app_rt_shared thread pt_autograd_0 site 2 2M endthread
guard "--report $tmp/m2.json" app_rt_shared thread pt_autograd_1 site 2 2M endthread
# A group with no frame of the user's code names its thread instead.
"$tool" --library '*/app_rt_shared' "$tmp/m1.json" >"$tmp/out" 2>"$tmp/err"
is "$(grep -c '^  on thread pt_autograd_0 (no frame of your code)$' "$tmp/out")" 1 \
  "summary: a group of libraries only is named by its thread"
"$tool" --json "$tmp/m1.json" >"$tmp/j.json"
is "$("$PYTHON3" -c 'import json, sys; print([[(t["source"], t["name"]) for t in l["threads"]] for l in json.load(open(sys.argv[1]))["summaries"][0]["leaks"]])' "$tmp/j.json")" \
  "[[(0, 'pt_autograd_0')]]" "--json: a group's threads"
"$tool" merge --json "$tmp/m1.json" "$tmp/m2.json" >"$tmp/j.json"
is "$("$PYTHON3" -c 'import json, sys; print([[(t["source"], t["name"]) for t in l["threads"]] for l in json.load(open(sys.argv[1]))["summaries"][0]["leaks"]])' "$tmp/j.json")" \
  "[[(0, 'pt_autograd_0'), (1, 'pt_autograd_1')]]" "merge --json: the threads of each report"

# The main thread renamed before it allocates; two threads allocating at
# one site; through the driver.
guard "--report $R" app_driver name cmgtest-main site 1 1M \
  thread cmgtest-a site 2 1M endthread thread cmgtest-b site 2 1M endthread
validate "$R"
is "$(q "$R" "[t['name'] for l in r['leaks'] if 'cmgtest_site_1' in fn(l['stack']) for t in l['threads']]")" \
  "['cmgtest-main']" "the main thread renamed before its first allocation"
is "$(q "$R" "[t['name'] for l in r['leaks'] if 'cmgtest_site_2' in fn(l['stack']) for t in sorted(l['threads'], key=lambda t: t['name'])]")" \
  "['cmgtest-a', 'cmgtest-b']" "a group made on two threads names both"
is "$(q "$R" "[[t['tid'] for t in l['threads']] == sorted({a['thread'] for a in l['allocations']}) for l in r['leaks']]")" \
  "[True, True]" "each group's threads are its allocations', by tid"

# A forked child's report: its one thread, under the child's tid, named as
# the thread that forked.
rm -f "$tmp"/report.*.json
guard "" app_rt_static thread cmgtest-forker site 1 1M fork site 2 1M \
  endfork endthread
set -- "$tmp"/report.*.json
is "$#" 2 "parent and child each wrote a report"
for f in "$@"; do
  validate "$f"
  R=$f
  case "$(q "$R" '[fn(l["stack"]) for l in r["leaks"]]')" in
    *cmgtest_site_2*) child=$R ;;
    *) parent=$R ;;
  esac
done
R=$child
is "$(q "$R" '[(t["tid"] == r["process"]["pid"], t["name"]) for l in r["leaks"] for t in l["threads"]]')" \
  "[(True, 'cmgtest-forker')]" "the child: its own tid, the forking thread's name"
R=$parent
is "$(q "$R" '[t["name"] for l in r["leaks"] for t in l["threads"]]')" \
  "['cmgtest-forker']" "the parent: the thread that allocated"

# The script's blocks and names are checked before anything runs.
bare app_rt_shared site 1 1M endthread
is "$rc/$(cat "$tmp/out")" 64/ "endthread without thread: refused, nothing run"
bare app_rt_shared fork thread cmgtest-a endfork
is "$rc/$(grep -c 'endfork without fork' "$tmp/err")" 64/1 \
  "an endfork cannot close a thread block"
bare app_rt_shared name 0123456789abcdef
is "$rc/$(grep -c 'a name of 1 to 15 bytes' "$tmp/err")" 64/1 \
  "a name longer than the kernel keeps is refused"

done_testing
