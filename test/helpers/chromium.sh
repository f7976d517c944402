#!/bin/sh
# Debian's Chromium for the browser tests (test/helpers/browser.ts, docs/testing.md §4), without
# the right to raise its own priority. Run as root, Chromium sets its browser, GPU and compositor
# threads to nice -8; with software GL they can hold both cores of the test machine, and the
# servers and test processes beside them at nice 0 (three jobs side by side) then wait for the
# CPU so long that a server took over a minute to print its first line. Dropping CAP_SYS_NICE
# from the bounding and inheritable sets leaves every Chromium thread at nice 0 or above.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
  exec setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice /usr/bin/chromium "$@"
fi
exec /usr/bin/chromium "$@"
