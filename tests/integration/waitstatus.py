"""Runs a command and prints how it ended, as a parent's waitpid sees it:
"exit N" or "signal NAME core|nocore".  Used to compare a program's death
with and without the interposer; the core flag matters where the test
allows core files."""
import os
import signal
import sys

pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status = os.waitpid(pid, 0)
if os.WIFEXITED(status):
    print("exit %d" % os.WEXITSTATUS(status))
else:
    sig = os.WTERMSIG(status)
    print("signal %s %s" % (signal.Signals(sig).name,
                            "core" if os.WCOREDUMP(status) else "nocore"))
