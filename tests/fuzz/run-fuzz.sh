#!/bin/bash
# Build the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined), seed their corpora
# from the tests' fixtures and configs, and run each for a while.
#
#   tests/fuzz/run-fuzz.sh [--seconds N] [--jobs N] [--tap] [TARGET...]
#   make fuzz FUZZ_SECONDS=60            (what CI runs: 60 s per target)
#
# Targets: spec process resources state policy annotations values (default: all).
# Options: --srcdir DIR, --builddir DIR (holds config.h; default: the current dir if it has one,
# else srcdir), --out DIR (default BUILDDIR/tests/fuzz/out: binaries, the corpora libFuzzer
# grows, and crashes/), --jobs N (targets fuzzed at once; default 1), --tap (TAP for make check:
# skips when clang cannot build a fuzzer).
# Every crash input is left in OUT/crashes/TARGET/.  To keep one as a regression test, copy it
# to tests/fuzz/regressions/TARGET/ (`make check` replays that dir through tests/fuzz/replay),
# then fix the parser.
# The last line is `N passed, N failed` (failed = targets that crashed), then the total CPU time.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=
out=
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
tap=0
targets=()
all_targets=(spec process resources state policy annotations values)

while (($#)); do
	case $1 in
	--srcdir) srcdir=$(cd "$2" && pwd) && shift 2 ;;
	--builddir) builddir=$(cd "$2" && pwd) && shift 2 ;;
	--out) out=$2 && shift 2 ;;
	--seconds) seconds=$2 && shift 2 ;;
	--jobs) jobs=$2 && shift 2 ;;
	--tap) tap=1 && shift ;;
	-h | --help) sed -n '2,17p' "$0" && exit 0 ;;
	-*) echo "run-fuzz.sh: unknown option $1" >&2 && exit 2 ;;
	*) targets+=("$1") && shift ;;
	esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
if [[ -z $builddir ]]; then
	if [[ -f $PWD/config.h ]]; then builddir=$PWD; else builddir=$srcdir; fi
fi
out=${out:-$builddir/tests/fuzz/out}
CC=${FUZZ_CC:-clang}
log() { echo "# $*"; }

skip_all() {
	if ((tap)); then
		echo "1..0 # SKIP $*"
		exit 0
	fi
	echo "run-fuzz.sh: $*" >&2
	exit 1
}

[[ -f $builddir/config.h ]] || skip_all "no config.h in $builddir: run ./configure first"
command -v "$CC" >/dev/null || skip_all "$CC is not installed (apt-get install clang libclang-rt-14-dev)"
command -v jq >/dev/null || skip_all "jq is not installed"
yajl_cflags=$(pkg-config --cflags yajl 2>/dev/null)
yajl_libs=$(pkg-config --libs yajl 2>/dev/null || echo -lyajl)
mkdir -p "$out/obj" "$out/bin"
probe=$out/obj/probe.c
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$probe"
"$CC" -fsanitize=fuzzer,address,undefined "$probe" -o "$out/obj/probe" 2>/dev/null ||
	skip_all "$CC cannot build a libFuzzer binary (apt-get install libclang-rt-14-dev)"

# ---------------------------------------------------------------------------------------------
# build: the parsers instrumented for coverage, each target linked with libFuzzer's main

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# shellcheck disable=SC2206 # the flag strings are lists of words
cflags=(-std=gnu11 -g -O1 $san -Wall -Wno-unused-parameter -Wno-missing-field-initializers
	-I"$srcdir" -I"$builddir" $yajl_cflags)
lib_sources=("$srcdir"/spec/*.c "$srcdir"/runtime/error.c "$srcdir"/runtime/utils.c
	"$srcdir"/runtime/log.c "$srcdir"/runtime/policy.c "$srcdir"/runtime/policy-rules.c
	"$srcdir"/runtime/policy-devices.c)

build() {
	local objs=() src obj t
	for src in "${lib_sources[@]}"; do
		obj=$out/obj/$(basename "$(dirname "$src")")-$(basename "$src" .c).o
		if [[ ! -f $obj || $src -nt $obj || $0 -nt $obj ]]; then
			"$CC" "${cflags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" || return 1
		fi
		objs+=("$obj")
	done
	for t in "${targets[@]}"; do
		[[ -f $here/fuzz-$t.c ]] || {
			echo "run-fuzz.sh: no target $t" >&2
			return 1
		}
		# shellcheck disable=SC2086 # a list of words
		"$CC" "${cflags[@]}" -fsanitize=fuzzer "$here/fuzz-$t.c" "${objs[@]}" $yajl_libs -lm \
			-o "$out/bin/fuzz-$t" || return 1
	done
}
log "building ${targets[*]} with $CC in $out"
build || skip_all "the build failed"

# ---------------------------------------------------------------------------------------------
# seeds: regenerated on every run, never committed

seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds"

seed() { # seed TARGET NAME CONTENT
	mkdir -p "$seeds/$1"
	printf '%s' "$3" >"$seeds/$1/$2"
}

# config.json: the fixtures, `agentrun spec`, and runc's default edited by every self-contained
# `update_config '<jq>'` of the bats suites (the configs the integration tests run).
seed_specs() {
	local f n=0 expr base=$srcdir/tests/fixtures/runc-default.json
	mkdir -p "$seeds/spec"
	for f in "$srcdir"/tests/fixtures/*.json; do
		jq -e 'has("ociVersion")' "$f" >/dev/null 2>&1 && cp "$f" "$seeds/spec/fixture-$(basename "$f")"
	done
	for f in "$builddir/agentrun" "$srcdir/agentrun"; do
		if [[ -x $f ]]; then
			local d
			d=$(mktemp -d)
			"$f" spec --bundle "$d" >/dev/null 2>&1 && cp "$d/config.json" "$seeds/spec/agentrun-spec.json"
			"$f" spec --rootless --bundle "$d.r" >/dev/null 2>&1 ||
				{ mkdir -p "$d.r" && "$f" spec --rootless --bundle "$d.r" >/dev/null 2>&1; }
			[[ -f $d.r/config.json ]] && cp "$d.r/config.json" "$seeds/spec/agentrun-spec-rootless.json"
			rm -rf "$d" "$d.r"
			break
		fi
	done
	while IFS= read -r expr; do
		((n < 400)) || break
		jq -c "$expr" "$base" >"$seeds/spec/bats-$n.json" 2>/dev/null && n=$((n + 1))
	done < <(grep -ho "update_config '[^'\$]*'" "$srcdir"/tests/*.bats "$srcdir"/tests/*/*.bats 2>/dev/null |
		sed "s/^update_config '//; s/'\$//" | sort -u)
	rm -f "$seeds/spec/bats-$n.json"
	log "spec: $(ls "$seeds/spec" | wc -l) seeds ($n from the bats suites)"
}

seed_from_specs() { # seed_from_specs TARGET JQ-PATH
	local f i=0
	mkdir -p "$seeds/$1"
	for f in "$seeds"/spec/*.json; do
		jq -ce "$2 // empty" "$f" >"$seeds/$1/spec-$i.json" 2>/dev/null && i=$((i + 1))
	done
	rm -f "$seeds/$1/spec-$i.json"
	# the same content from many configs: keep one of each
	(cd "$seeds/$1" && md5sum spec-*.json 2>/dev/null | sort | awk 'seen[$1]++ { print $2 }' | xargs -r rm -f)
}

seed_specs
seed_from_specs process .process
cp "$srcdir/tests/fixtures/process.json" "$seeds/process/fixture.json"
seed_from_specs resources .linux.resources
cp "$srcdir/tests/fixtures/resources.json" "$seeds/resources/fixture.json"
seed resources update-memory '{"memory":{"limit":536870912,"swap":-1,"reservation":0}}'
seed resources update-cpu '{"cpu":{"shares":512,"quota":50000,"period":100000,"cpus":"0-1","mems":"0"}}'
seed resources update-pids '{"pids":{"limit":64},"blockIO":{"weight":500}}'
seed resources update-unified '{"unified":{"memory.high":"100M","pids.max":"max"}}'

for f in "$srcdir"/contrib/policy/*.json; do
	[[ -f $f ]] && seed policy "contrib-$(basename "$f")" "$(cat "$f")"
done
seed policy full '{"comment":"every key","controls":{"network":true,"readonly_rootfs":true,"seccomp":true,"capabilities":true,"no_new_privileges":true,"limits":true,"rlimits":true,"devices":true,"masked_paths":true,"sysctl":true,"timeout":true,"namespaces":true},"allow":{"network_inherit":true,"rootfs_writable":false,"seccomp_off":false,"audit_off":true},"defaults":{"timeout":"30s","memory":"512m","pids":64,"cpus":0.5,"tmp_size":"64m","shm_size":"1m"},"maxima":{"timeout":3600,"memory":"4g","pids":4096,"cpus":4,"tmp_size":1073741824},"devices":["/dev/fuse","/dev/nvidia0"],"audit":{"enabled":true,"dir":"/var/log/agentrun","max_bytes":"64m","syslog":false}}'
seed policy audit-only '{"audit":{"dir":"/tmp/a"}}'
seed policy empty '{}'

seed state created '{"id":"c1","pid":4242,"pidStart":123456,"bundle":"/b","rootfs":"/b/rootfs","created":"2024-01-01T00:00:00.000000000Z","owner":"","started":false,"monitorPid":4250,"cgroup":"hybrid;memory:/x/c1;pids:/c1;:/c1","agentSeccomp":true,"auditExec":true,"auditLog":"/var/log/agentrun/c1.jsonl","annotations":{"run.agentrun.timeout":"30s"}}'
seed state stopped '{"id":"c2","pid":0,"bundle":"/b","rootfs":"/b/rootfs","created":"2024-01-01T00:00:00Z","started":true,"monitorPid":0}'
seed state v2 '{"id":"a.b_c-d+e","pid":1,"pidStart":1,"bundle":"/","rootfs":"/","created":"x","cgroup":"v2;/sys/fs/cgroup/a.b"}'

i=0
for a in 'timeout=30s' 'timeout=2m' 'timeout=1h' 'timeout=500ms' 'memory=512m' 'memory=1g' \
	'tmp-size=64m' 'pids=64' 'cpus=0.5' 'cpus=2' 'network=none' 'network=inherit' \
	'rootfs=readonly' 'rootfs=writable' 'seccomp=on' 'seccomp=off' 'audit=on' 'audit=off' \
	$'timeout=10s\nmemory=256m\npids=32\ncpus=1.5\ntmp-size=16m' 'memory=0' 'cpus=1e300' 'bogus=1'; do
	seed annotations "a$i" "$a"
	i=$((i + 1))
done
i=0
for v in 30s 2m 1h 500ms 0 512m 1g 64KiB 4096 1tb 18446744073709551615 18446744073709551616 \
	17179869184g 5124095576030431h -1 ' 5' '+5' 1.5g 10S 1Gb; do
	seed values "v$i" "$v"
	i=$((i + 1))
done

# Dictionaries: the JSON keys the seeds use, and the units.
jq -r '[paths | .[] | strings] | unique | .[]' "$seeds"/spec/*.json "$seeds"/policy/* 2>/dev/null |
	sort -u | grep -E '^[A-Za-z0-9_.-]+$' | sed 's/.*/"\\"&\\""/' >"$out/json.dict"
printf '"%s"\n' '{' '}' '[' ']' ':' ',' 'null' 'true' 'false' '-1' '0' '18446744073709551615' \
	'9223372036854775807' '-9223372036854775808' '1e999' '\\u0000' '\\ud800' >>"$out/json.dict"
printf '"%s"\n' s ms m h k kb kib mb mib g gb gib t tb tib = '\\n' timeout memory tmp-size pids \
	cpus network rootfs seccomp audit none inherit readonly writable on off >"$out/values.dict"

# ---------------------------------------------------------------------------------------------
# run

fuzz_one() { # fuzz_one TARGET: runs it, prints "TARGET execs cpu_seconds crashes"
	local t=$1 dict=$out/json.dict max_len=16384 cpu execs crashes
	[[ $t == values || $t == annotations ]] && dict=$out/values.dict
	[[ $t == values ]] && max_len=256
	[[ $t == annotations ]] && max_len=4096
	mkdir -p "$out/corpus/$t" "$out/crashes/$t" "$seeds/$t"
	rm -f "$out/crashes/$t"/*
	# time's %U %S: the CPU the target burnt, whatever else the machine does
	/usr/bin/time -f '%U %S' -o "$out/$t.time" \
		"$out/bin/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len="$max_len" -dict="$dict" -print_final_stats=1 -close_fd_mask=1 \
		-artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" "$seeds/$t" >"$out/$t.log" 2>&1
	cpu=$(awk '{ printf "%.1f", $1 + $2 }' "$out/$t.time" 2>/dev/null)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
	crashes=$(find "$out/crashes/$t" -type f | wc -l)
	echo "$t ${execs:-0} ${cpu:-0} $crashes"
}

log "fuzzing each target for $seconds s, $jobs at a time"
results=$out/results
: >"$results"
running=0
for t in "${targets[@]}"; do
	fuzz_one "$t" >>"$results" &
	running=$((running + 1))
	if ((running >= jobs)); then
		wait -n
		running=$((running - 1))
	fi
done
wait

n=0 passed=0 failed=0 total_cpu=0 total_execs=0
((tap)) && echo "1..${#targets[@]}"
for t in "${targets[@]}"; do
	read -r _ execs cpu crashes < <(grep "^$t " "$results")
	n=$((n + 1))
	total_cpu=$(awk -v a="$total_cpu" -v b="$cpu" 'BEGIN { printf "%.1f", a + b }')
	total_execs=$((total_execs + execs))
	if ((crashes == 0)); then
		passed=$((passed + 1))
		line="ok $n - $t: $execs inputs in $cpu s CPU, no crash"
	else
		failed=$((failed + 1))
		line="not ok $n - $t: $crashes crash(es) in $out/crashes/$t/ (log: $out/$t.log)"
		grep -m3 -E 'ERROR: |fuzz invariant|runtime error' "$out/$t.log" | sed 's/^/# /'
	fi
	if ((tap)); then echo "$line"; else echo "${line#* - }"; fi
done
echo "$passed passed, $failed failed"
echo "# total: $total_execs inputs, $total_cpu s CPU fuzzed"
((failed == 0))
