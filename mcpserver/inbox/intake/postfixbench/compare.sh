#!/usr/bin/env bash
# Compares the SMTP intake of `kobana serve` with Postfix at the same
# promise: both answer 250 only once the message is on disk (Postfix's
# smtpd/cleanup fsync the queue file before replying; the intake syncs the
# message file and commits its records). Postfix's smtp-sink, which stores
# nothing, is the no-work ceiling.
#
#   inbox/intake/postfixbench/compare.sh            (as root: Postfix needs it)
#
# What it does, all on loopback, in a temporary directory it removes after:
#   - installs what is missing (Debian's postfix, for postfix, smtp-source and
#     smtp-sink; dnsmasq-base; postgresql) with apt-get;
#   - starts a Postfix instance of its own (postfix -c DIR: its own config,
#     queue and data directories, its own port, Postfix's default queue file
#     fsync, every message delivered to discard), smtp-sink, a DNS server
#     (dnsmasq) answering every name "does not exist" at once (the intake's
#     SPF and DMARC lookups, as a local caching resolver would answer them),
#     and a PostgreSQL cluster with its default durability (fsync on,
#     synchronous commit);
#   - builds kobana and runs `kobana serve -smtp ADDR -process=false -demo`
#     on SQLite and on PostgreSQL, a fresh database each round;
#   - drives every server with smtp-source: messages of SIZE bytes, one per
#     connection, at 1 and at 8 sessions, in interleaved rounds (each round
#     measures every server, in an order that rotates, so a change in the
#     machine's load falls on all of them alike);
#   - prints each server's messages per second, kobana's ratio to Postfix per
#     round (median, min–max), its ratio to smtp-sink, and its peak RSS; then
#     sends RSS_MESSAGES messages to one kobana process per backend and prints
#     its RSS after them.
#
# Settings (environment): ROUNDS (5), MESSAGES_1 (500), MESSAGES_8 (2000),
# SIZE (102400), RSS_MESSAGES (10000), BACKENDS ("sqlite postgres"),
# KOBANA (a kobana binary to measure instead of building one), BASELINE (a
# git revision, or a kobana binary, measured in the same rounds as
# "baseline-BACKEND": before/after figures from one run), KEEP=1 (keep the
# working directory, with kobana's logs, and say where).
#
# The demo workspace allows 5,000 e-mails a month: each round's kobana starts
# on a fresh database, so every measured message is accepted (an e-mail
# record, its part index, its event and its agent job committed); in the
# memory run the messages past 5,000 are recorded as rejected for the quota,
# which stores and records them all the same.
set -euo pipefail
cd "$(dirname "$0")/../../.."

ROUNDS=${ROUNDS:-5}
MESSAGES_1=${MESSAGES_1:-500}
MESSAGES_8=${MESSAGES_8:-2000}
SIZE=${SIZE:-102400}
RSS_MESSAGES=${RSS_MESSAGES:-10000}
BACKENDS=${BACKENDS:-sqlite postgres}

if [ "$(id -u)" != 0 ]; then
	echo "compare.sh: run as root: a Postfix instance's master process needs it (and apt-get, for what is missing)" >&2
	exit 1
fi

# --- what it needs -----------------------------------------------------------
missing=()
command -v smtp-source >/dev/null 2>&1 && command -v postfix >/dev/null 2>&1 || missing+=(postfix)
command -v dnsmasq >/dev/null 2>&1 || missing+=(dnsmasq-base)
pgbin=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -V -r); do
	if [ -x "$d/initdb" ]; then pgbin=$d; break; fi
done
if [[ " $BACKENDS " == *" postgres "* ]] && [ -z "$pgbin" ]; then missing+=(postgresql); fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing Debian's ${missing[*]}"
	echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -V -r); do
		if [ -x "$d/initdb" ]; then pgbin=$d; break; fi
	done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kobana-postfixbench.XXXXXX")
chmod 755 "$work"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	postfix -c "$work/postfix/etc" stop >/dev/null 2>&1 || true
	if [ -n "$pgbin" ] && [ -d "$work/pg/data" ]; then
		runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	if [ "${KEEP:-}" = 1 ]; then
		echo "compare.sh: kept $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

base=$((20000 + RANDOM % 20000))
port_postfix=$base port_sink=$((base + 1)) port_dns=$((base + 2)) port_kobana=$((base + 3))

# wait_port PORT waits until something listens on 127.0.0.1:PORT.
wait_port() {
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "compare.sh: nothing listens on 127.0.0.1:$1" >&2
	return 1
}

# --- Postfix, its own instance -----------------------------------------------
pf=$work/postfix
mkdir -p "$pf/etc" "$pf/queue" "$pf/data"
chown postfix "$pf/data"
cp /etc/postfix/master.cf.proto "$pf/etc/master.cf" 2>/dev/null || cp /etc/postfix/master.cf "$pf/etc/master.cf"
# smtpd on its own loopback port, outside the chroot (paths are this instance's).
sed -i -E "s/^smtp +inet +n +- +[yn] +- +- +smtpd/127.0.0.1:$port_postfix inet n - n - - smtpd/" "$pf/etc/master.cf"
cat >"$pf/etc/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $pf/queue
data_directory = $pf/data
mail_owner = postfix
setgid_group = postdrop
myhostname = postfix.bench.test
mydomain = bench.test
myorigin = bench.test
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mydestination =
local_recipient_maps =
relay_domains = finance.in.kobana.email
relay_recipient_maps =
mynetworks = 127.0.0.0/8
smtpd_recipient_restrictions = permit_mynetworks, reject
default_transport = discard
relay_transport = discard
alias_maps =
alias_database =
maillog_file = $pf/maillog
maillog_file_prefixes = $pf
default_process_limit = 100
smtpd_client_connection_count_limit = 0
smtpd_client_connection_rate_limit = 0
EOF
grep -q "^127.0.0.1:$port_postfix " "$pf/etc/master.cf" || { echo "compare.sh: could not point master.cf's smtpd at port $port_postfix" >&2; exit 1; }
postfix -c "$pf/etc" check
postfix -c "$pf/etc" start >/dev/null
wait_port "$port_postfix"

# --- the no-work ceiling, and DNS --------------------------------------------
smtp-sink -u nobody "127.0.0.1:$port_sink" 256 &
pids+=($!)
wait_port "$port_sink"
dnsmasq --keep-in-foreground --port "$port_dns" --listen-address 127.0.0.1 --bind-interfaces \
	--no-resolv --no-hosts --local='/#/' --pid-file="$work/dnsmasq.pid" --log-facility=/dev/null &
pids+=($!)

# --- PostgreSQL with its default durability ------------------------------------
if [[ " $BACKENDS " == *" postgres "* ]]; then
	mkdir -p "$work/pg"
	chown postgres: "$work/pg"
	runuser -u postgres -- "$pgbin/initdb" -D "$work/pg/data" -U postgres -A trust -E UTF8 --locale=C >/dev/null
	runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w -t 60 \
		-o "-c listen_addresses= -k $work/pg -c max_connections=100" start >/dev/null
	runuser -u postgres -- "$pgbin/psql" -h "$work/pg" -U postgres -q -c "CREATE ROLE kobana LOGIN CREATEDB" >/dev/null
fi

# --- kobana --------------------------------------------------------------------
if [ -z "${KOBANA:-}" ]; then
	go build -o "$work/kobana" ./cmd/kobana
	KOBANA=$work/kobana
fi
if [ -n "${BASELINE:-}" ] && [ ! -x "$BASELINE" ]; then
	git worktree add --detach "$work/baseline-src" "$BASELINE" >/dev/null
	(cd "$work/baseline-src" && go build -o "$work/baseline" ./cmd/kobana)
	git worktree remove --force "$work/baseline-src"
	BASELINE=$work/baseline
fi
kobana_pid=""
kobana_n=0
kobana_db=""
kobana_dir=""
# start_kobana BACKEND [BINARY] starts kobana serve on a fresh database.
start_kobana() {
	local bin=${2:-$KOBANA}
	kobana_n=$((kobana_n + 1))
	local dir=$work/kobana-$kobana_n db
	kobana_dir=$dir
	mkdir -p "$dir/messages"
	case $1 in
	sqlite) db=$dir/kobana.db ;;
	postgres)
		runuser -u postgres -- "$pgbin/psql" -h "$work/pg" -U postgres -q -c "CREATE DATABASE bench$kobana_n OWNER kobana" >/dev/null
		db="postgres://kobana@/bench$kobana_n?host=$work/pg&sslmode=disable"
		;;
	esac
	kobana_db=$db
	"$bin" serve -v -db "$db" -messages "$dir/messages" -demo -smtp "127.0.0.1:$port_kobana" -process=false \
		-dns "127.0.0.1:$port_dns" -smtp-hostname mx.bench.test >"$dir/out.log" 2>&1 &
	kobana_pid=$!
	pids+=("$kobana_pid")
	for _ in $(seq 200); do
		grep -q "receiving mail" "$dir/out.log" 2>/dev/null && return 0
		kill -0 "$kobana_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$dir/out.log" >&2
	echo "compare.sh: kobana serve did not start" >&2
	return 1
}
stop_kobana() {
	kill "$kobana_pid" 2>/dev/null || true
	wait "$kobana_pid" 2>/dev/null || true
}
# stored is how many raw messages the running kobana keeps.
stored() {
	case $kobana_db in
	postgres://*) runuser -u postgres -- "$pgbin/psql" -h "$work/pg" -U postgres -d "${kobana_db#postgres://kobana@/}" -Atq -c "SELECT count(*) FROM inbox_messages" 2>/dev/null ||
		runuser -u postgres -- "$pgbin/psql" -h "$work/pg" -U postgres -d "bench$kobana_n" -Atq -c "SELECT count(*) FROM inbox_messages" ;;
	*) find "$kobana_dir/messages/messages" -name '*.eml' | wc -l ;;
	esac
}
# status_kb FIELD is a field of kobana's /proc status, in KiB.
status_kb() { awk -v f="$1:" '$1 == f {print $2}' "/proc/$kobana_pid/status"; }

# send PORT SESSIONS MESSAGES RECIPIENT prints the messages per second.
send() {
	local start end
	start=$(date +%s.%N)
	if ! smtp-source -s "$2" -m "$3" -l "$SIZE" -S receipt -f bench@sender.test -t "$4" "127.0.0.1:$1" 2>"$work/source.err"; then
		cat "$work/source.err" >&2
		return 1
	fi
	end=$(date +%s.%N)
	if [ -s "$work/source.err" ]; then
		echo "compare.sh: smtp-source reported errors:" >&2
		head -5 "$work/source.err" >&2
		return 1
	fi
	awk -v n="$3" -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", n / (b - a)}'
}

rcpt=receipts@finance.in.kobana.email
results=$work/results
: >"$results"
targets=(postfix sink)
for b in $BACKENDS; do targets+=("kobana-$b"); done
if [ -n "${BASELINE:-}" ]; then
	for b in $BACKENDS; do targets+=("baseline-$b"); done
fi

echo "servers: Postfix $(postconf -d -h mail_version) (own instance on :$port_postfix), smtp-sink, kobana ($KOBANA) on ${BACKENDS}${BASELINE:+, and the baseline ($BASELINE)}"
echo "messages of $SIZE bytes, one per connection; $ROUNDS rounds of $MESSAGES_1 at 1 session and $MESSAGES_8 at 8"
for round in $(seq "$ROUNDS"); do
	# Rotate the order so no server always runs first (or right after another).
	n=${#targets[@]}
	order=()
	for i in $(seq 0 $((n - 1))); do order+=("${targets[$(((i + round) % n))]}"); done
	for t in "${order[@]}"; do
		case $t in
		postfix) port=$port_postfix ;;
		sink) port=$port_sink ;;
		kobana-*)
			start_kobana "${t#kobana-}"
			port=$port_kobana
			;;
		baseline-*)
			start_kobana "${t#baseline-}" "$BASELINE"
			port=$port_kobana
			;;
		esac
		r1=$(send "$port" 1 "$MESSAGES_1" "$rcpt")
		r8=$(send "$port" 8 "$MESSAGES_8" "$rcpt")
		hwm=""
		if [[ $t == kobana-* || $t == baseline-* ]]; then
			hwm=$(status_kb VmHWM)
			kept=$(stored)
			stop_kobana
			if [ "$kept" -ne $((MESSAGES_1 + MESSAGES_8)) ]; then
				echo "compare.sh: $t kept $kept messages of the $((MESSAGES_1 + MESSAGES_8)) it answered 250 for" >&2
				exit 1
			fi
		fi
		echo "$round $t $r1 $r8 $hwm" >>"$results"
		printf 'round %d %-16s 1 session %7s/s   8 sessions %7s/s%s\n' "$round" "$t" "$r1" "$r8" "${hwm:+   peak RSS $((hwm / 1024)) MiB}"
	done
done

echo
echo "summary (median, min-max over $ROUNDS rounds; ratios paired within each round):"
awk -v backends="$BACKENDS" -v baseline="${BASELINE:+1}" '
function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
function stats(name, a, n,   m) {
	sortn(a, n)
	m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	printf "  %-34s %8.2f   (%.2f-%.2f)\n", name, m, a[1], a[n]
}
{ rate1[$1, $2] = $3; rate8[$1, $2] = $4; if ($5 != "") hwm[$1, $2] = $5; rounds[$1] = 1; seen[$2] = 1 }
END {
	nr = 0; for (r in rounds) nr++
	for (t in seen) {
		n = 0; for (r = 1; r <= nr; r++) a[++n] = rate1[r, t]; stats(t " msgs/s, 1 session", a, n)
		n = 0; for (r = 1; r <= nr; r++) a[++n] = rate8[r, t]; stats(t " msgs/s, 8 sessions", a, n)
	}
	split(backends, bs, " ")
	nk = 0
	for (i in bs) { keys[++nk] = "kobana-" bs[i]; if (baseline) keys[++nk] = "baseline-" bs[i] }
	for (j = 1; j <= nk; j++) {
		k = keys[j]
		n = 0; for (r = 1; r <= nr; r++) a[++n] = rate1[r, k] / rate1[r, "postfix"]; stats(k " / postfix, 1 session", a, n)
		n = 0; for (r = 1; r <= nr; r++) a[++n] = rate8[r, k] / rate8[r, "postfix"]; stats(k " / postfix, 8 sessions", a, n)
		n = 0; for (r = 1; r <= nr; r++) a[++n] = rate1[r, k] / rate1[r, "sink"]; stats(k " / smtp-sink, 1 session", a, n)
		n = 0; for (r = 1; r <= nr; r++) a[++n] = rate8[r, k] / rate8[r, "sink"]; stats(k " / smtp-sink, 8 sessions", a, n)
		n = 0; for (r = 1; r <= nr; r++) a[++n] = hwm[r, k] / 1024; stats(k " peak RSS MiB", a, n)
	}
}' "$results"

if [ "$RSS_MESSAGES" -gt 0 ]; then
	echo
	echo "memory (RSS counts the mapped executable's pages; anonymous is the process's own memory):"
	for b in $BACKENDS; do
		for who in kobana ${BASELINE:+baseline}; do
			bin=$KOBANA
			[ "$who" = baseline ] && bin=$BASELINE
			start_kobana "$b" "$bin"
			idle=$(status_kb RssAnon)
			rate=$(send "$port_kobana" 8 "$RSS_MESSAGES" "$rcpt")
			printf '  %s-%s after %d messages (8 sessions, %s/s): RSS %d MiB (peak %d), anonymous %d MiB (%d at start)\n' \
				"$who" "$b" "$RSS_MESSAGES" "$rate" $(($(status_kb VmRSS) / 1024)) $(($(status_kb VmHWM) / 1024)) \
				$(($(status_kb RssAnon) / 1024)) $((idle / 1024))
			stop_kobana
		done
	done
fi
