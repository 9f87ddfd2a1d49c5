#!/bin/sh
# Measures `kobana run` uploading a 50 MiB attachment from an .eml to a
# loopback receiver, side by side with `curl -F` uploading the same file to
# the same receiver. Run by hand from the repository root:
#
#	sh resolve/eml/testdata/uploadbench/measure.sh
#
# Needs curl, hyperfine (apt-get install hyperfine) and GNU time. Prints
# hyperfine's table (whole process, several runs; compare the medians) and
# each command's peak RSS. KOBANA=path measures another build of kobana.
set -eu
work=$(mktemp -d)
trap 'kill $rpid 2>/dev/null; rm -rf "$work"' EXIT
dir=$(dirname "$0")
size=${SIZE:-52428800}

if [ -n "${KOBANA:-}" ]; then cp "$KOBANA" "$work/kobana"; else go build -o "$work/kobana" ./cmd/kobana; fi
go build -o "$work/receiver" "$dir/receiver.go"
"$work/receiver" -addr 127.0.0.1:18080 &
rpid=$!

# The file, and an .eml carrying it in base64 (76-column lines, CRLF).
head -c "$size" /dev/urandom > "$work/backup.zip"
{
	printf 'From: erp@example.com\r\nTo: financeiro@example.com\r\nSubject: backup\r\nMIME-Version: 1.0\r\n'
	printf 'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nsegue\r\n'
	printf -- '--B\r\nContent-Type: application/zip; name="backup.zip"\r\nContent-Disposition: attachment; filename="backup.zip"\r\nContent-Transfer-Encoding: base64\r\n\r\n'
	base64 -w 76 "$work/backup.zip" | sed 's/$/\r/'
	printf -- '--B--\r\n'
} > "$work/backup.eml"
cat > "$work/upload.json" <<'JSON'
{"result":{},"workflow":[{"type":"request","url":"http://127.0.0.1:18080/upload","form":{"file":"${{email.attachments.0}}"}}]}
JSON
sleep 0.5

run="$work/kobana run -workflow $work/upload.json -eml $work/backup.eml -allow 127.0.0.1/32 -record $work/record.json"
curl="curl -sS -o /dev/null -F file=@$work/backup.zip http://127.0.0.1:18080/upload"
hyperfine -N -w 2 -r ${RUNS:-15} --export-json "$work/times.json" "$curl" "$run"
python3 - "$work/times.json" <<'PY'
import json, sys
c, k = json.load(open(sys.argv[1]))["results"]
print("median wall: curl -F %.1f ms, kobana run %.1f ms, ratio %.2f" % (c["median"] * 1e3, k["median"] * 1e3, k["median"] / c["median"]))
cc, kc = c["user"] + c["system"], k["user"] + k["system"]
print("mean CPU (user+system): curl -F %.1f ms, kobana run %.1f ms" % (cc * 1e3, kc * 1e3))
PY
grep -q '"status": *"succeeded"' "$work/record.json" || { echo "the run did not succeed:"; cat "$work/record.json"; exit 1; }
for cmd in "$curl" "$run"; do
	/usr/bin/time -f "peak RSS %M KiB: ${cmd%% *}" $cmd 2>&1 >/dev/null | grep 'peak RSS'
done
