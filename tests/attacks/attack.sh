#!/bin/sh
# attack.sh MODE ARTIFACT - a hostile trainer of t-exec-attacks.sh: each
# MODE tries one way out of the sandbox, or one way to choose its own
# verdict, and writes what it saw into the artifact when it gets that far.
# attack.sh score[-MODE] ARTIFACT CASES SCORES - its scorer: a score for
# every case (a number the artifact's bytes choose), or MODE's attack on /out/scores.txt.
mode=$1
art=$2
out=$(dirname "$art")
case $mode in
score)	s=0.$(cksum < "$2" | cut -c1-4)
	tail -n +2 "$3" | while IFS= read -r line; do echo "$s"; done > "$4" ;;
score-link)	ln -s /etc/shadow "$4" ;;
score-fifo)	mkfifo "$4" ;;
honest)	echo "a model" > "$art" ;;
random)	head -c 32 /dev/urandom > "$art" ;;
link-shadow)	ln -s /etc/shadow "$art" ;;
link-host)	ln -s "$RBA_DEPLOYED" "$art" ;;
link-in)	ln -s /in/snapshot.csv "$art" ;;
link-metrics)	echo "a model" > "$art"; ln -s /etc/passwd "$out/metrics.json" ;;
hardlink)	ln /in/snapshot.csv "$art" 2>/dev/null || echo "no hard link across" > "$art" ;;
fifo)	mkfifo "$art" ;;
fifo-metrics)	echo "a model" > "$art"; mkfifo "$out/metrics.json" ;;
dir)	mkdir "$art" ;;
late)	# a child that replaces the artifact by a link after the trainer exits
	echo "a model" > "$art"
	( sleep 1; rm -f "$art"; ln -s /etc/shadow "$art" ) &
	;;
environ)	# every variable any process of the sandbox holds
	for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f" 2>/dev/null; done |
		sort -u > "$art" ;;
fill)	# every writable place, past the output limit
	report=
	for d in /tmp /dev/shm /out /; do
		head -c 33554432 /dev/zero > "$d/fill" 2>/dev/null
		report="$report$d $(wc -c < "$d/fill" 2>/dev/null || echo 0)
"
		rm -f "$d/fill"
	done
	printf '%s' "$report" > "$art" ;;
files)	# many files in /out, each under the file limit
	i=0; while [ $i -lt 64 ]; do head -c 1048576 /dev/zero > "$out/f$i" 2>/dev/null || break; i=$((i+1)); done
	rm -f "$out"/f*
	echo "files $i" > "$art" ;;
forks)	# a fork bomb: counts how many it started before a fork failed
	python3 - "$art" <<'PY'
import os, sys, time
n = 0
while n < 2000:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
open(sys.argv[1], "w").write("forks %d\n" % n)
PY
	;;
net)	# the network: no route, no name
	if python3 -c 'import socket; socket.create_connection(("1.1.1.1", 80), 3)' 2>/dev/null; then
		echo "net open" > "$art"
	else echo "net closed" > "$art"; fi ;;
hostread)	# the host: no file of it but /usr and the loader's
	for f in /etc/shadow /etc/passwd /root /home /work /var /etc/hostname; do
		[ -e "$f" ] && echo "sees $f"
	done > "$art"; echo "end" >> "$art" ;;
daemon)	echo "a model" > "$art"; setsid sleep 1000 > /dev/null 2>&1 < /dev/null & ;;
sleep)	sleep 1000 ;;
*)	echo "attack.sh: unknown mode $mode" >&2; exit 2 ;;
esac
