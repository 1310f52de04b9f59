# contrib/bench/report.sh: raw.tsv -> results.md (markdown table) and results.png (gnuplot).
# Sourced by run.sh. raw.tsv lines: metric, variant, round, value, failed runs.
# shellcheck shell=bash

# metric variant -> median min max fails rounds
summarize() {
  sort -t$'\t' -k1,1 -k2,2 -k4,4g "$1" | awk -F'\t' '
    function flush() {
      if (n == 0) return
      med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", m, var, med, v[1], v[n], fails, n
    }
    $4 == "" { next }
    $1 != m || $2 != var { flush(); m = $1; var = $2; n = 0; fails = 0 }
    { v[++n] = $4; fails += $5 }
    END { flush() }'
}

# st METRIC VARIANT [FIELD]: FIELD 3 median (default), 4 min, 5 max, 6 fails
st() { awk -F'\t' -v m="$1" -v v="$2" -v f="${3:-3}" '$1 == m && $2 == v { print $f; exit }' "$STATS"; }

# ratio A B: A / B with 2 decimals, or "–" when either is missing
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "–"; else printf "%.2f", a / b }'
}

fmt() { awk -v x="$1" -v d="$2" 'BEGIN { if (x == "") print "–"; else printf "%.*f", d, x }'; }

# The reference of the "× ref" column, per metric.
ref_of() {
  case $1 in
  lifecycle | isolated | lifecycle_cpu | tp1 | tp2) echo floor ;;
  getppid) echo runc-none ;;
  audit) echo ar-noaudit ;;
  cold) echo bwrap ;;
  esac
}

# row NUM METRIC VARIANT LABEL UNIT DECIMALS
row() {
  local num=$1 m=$2 v=$3 label=$4 unit=$5 d=$6 med crun runc ref c_ref r_ref fails note=
  med=$(st "$m" "$v")
  [ -n "$med" ] || return 0
  case $m in
  getppid) crun=crun-docker runc=runc-docker ;;
  *) crun=crun runc=runc ;;
  esac
  ref=$(ref_of "$m")
  c_ref=$(st "$m" $crun)
  r_ref=$(st "$m" $runc)
  fails=$(st "$m" "$v" 6)
  [ "${fails:-0}" = 0 ] || note=" (**$fails runs failed**)"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s–%s |\n' "$num" "$label$note" "$unit" \
    "$(fmt "$med" "$d")" "$(ratio "$med" "$c_ref")" "$(ratio "$med" "$r_ref")" \
    "$([ -n "$ref" ] && ratio "$med" "$(st "$m" "$ref")" || echo –)" "$(st "$m" "$v" 7)" \
    "$(fmt "$(st "$m" "$v" 4)" "$d")" "$(fmt "$(st "$m" "$v" 5)" "$d")"
}

# Every row of the table: NUM METRIC VARIANT LABEL UNIT DECIMALS
ROWS=(
  "1|lifecycle|ar-hard|run /bin/true: agentrun, hardened (default policy)|ms|2"
  "1|lifecycle|ar-pass|run /bin/true: agentrun, passthrough policy|ms|2"
  "1|lifecycle|crun|run /bin/true: crun|ms|2"
  "1|lifecycle|runc|run /bin/true: runc|ms|2"
  "1|lifecycle|floor|run /bin/true: raw floor (unshare -mpniu --fork + chroot)|ms|2"
  "1|lifecycle_cpu|ar-hard|CPU time per run (every process): agentrun, hardened|ms|2"
  "1|lifecycle_cpu|ar-pass|CPU time per run: agentrun, passthrough|ms|2"
  "1|lifecycle_cpu|crun|CPU time per run: crun|ms|2"
  "1|lifecycle_cpu|runc|CPU time per run: runc|ms|2"
  "1|lifecycle_cpu|floor|CPU time per run: raw floor|ms|2"
  "1b|isolated|ar-hard|run /bin/true alone (after idle): agentrun, hardened|ms|2"
  "1b|isolated|ar-pass|run /bin/true alone: agentrun, passthrough|ms|2"
  "1b|isolated|crun|run /bin/true alone: crun|ms|2"
  "1b|isolated|runc|run /bin/true alone: runc|ms|2"
  "1b|isolated|floor|run /bin/true alone: raw floor|ms|2"
  "2|create|ar-hard|create: agentrun, hardened|ms|2"
  "2|create|ar-pass|create: agentrun, passthrough|ms|2"
  "2|create|crun|create: crun|ms|2"
  "2|create|runc|create: runc|ms|2"
  "2|start|ar-hard|start: agentrun, hardened|ms|2"
  "2|start|ar-pass|start: agentrun, passthrough|ms|2"
  "2|start|crun|start: crun|ms|2"
  "2|start|runc|start: runc|ms|2"
  "2|delete|ar-hard|delete: agentrun, hardened|ms|2"
  "2|delete|ar-pass|delete: agentrun, passthrough|ms|2"
  "2|delete|crun|delete: crun|ms|2"
  "2|delete|runc|delete: runc|ms|2"
  "3|exec|ar-hard|exec /bin/true: agentrun, hardened (audited)|ms|2"
  "3|exec|ar-pass|exec /bin/true: agentrun, passthrough|ms|2"
  "3|exec|crun|exec /bin/true: crun|ms|2"
  "3|exec|runc|exec /bin/true: runc|ms|2"
  "4|tp1|ar-hard|throughput, 1 worker: agentrun, hardened|containers/s ↑|1"
  "4|tp1|ar-pass|throughput, 1 worker: agentrun, passthrough|containers/s ↑|1"
  "4|tp1|crun|throughput, 1 worker: crun|containers/s ↑|1"
  "4|tp1|runc|throughput, 1 worker: runc|containers/s ↑|1"
  "4|tp1|floor|throughput, 1 worker: raw floor|containers/s ↑|1"
  "4|tp2|ar-hard|throughput, 2 workers: agentrun, hardened|containers/s ↑|1"
  "4|tp2|ar-pass|throughput, 2 workers: agentrun, passthrough|containers/s ↑|1"
  "4|tp2|crun|throughput, 2 workers: crun|containers/s ↑|1"
  "4|tp2|runc|throughput, 2 workers: runc|containers/s ↑|1"
  "4|tp2|floor|throughput, 2 workers: raw floor|containers/s ↑|1"
  "5|getppid|ar-hard|getppid: agentrun hardened, agent filter (config has none)|ns/call|1"
  "5|getppid|ar-hard-docker|getppid: agentrun hardened, agent filter stacked on Docker's|ns/call|1"
  "5|getppid|ar-pass-docker|getppid: agentrun passthrough, Docker's profile|ns/call|1"
  "5|getppid|crun-docker|getppid: crun, Docker's profile|ns/call|1"
  "5|getppid|runc-docker|getppid: runc, Docker's profile|ns/call|1"
  "5|getppid|runc-none|getppid: runc, no seccomp (baseline)|ns/call|1"
  "6|audit|ar-hard|exec in a shell loop: agentrun hardened, audit on|µs/exec|1"
  "6|audit|ar-noaudit|exec in a shell loop: agentrun hardened, audit off|µs/exec|1"
  "6|audit|crun|exec in a shell loop: crun|µs/exec|1"
  "6|audit|runc|exec in a shell loop: runc|µs/exec|1"
  "7|rss_create|ar-hard|peak RSS of create: agentrun, hardened|KiB|0"
  "7|rss_create|ar-pass|peak RSS of create: agentrun, passthrough|KiB|0"
  "7|rss_create|crun|peak RSS of create: crun|KiB|0"
  "7|rss_create|runc|peak RSS of create: runc|KiB|0"
  "7|monitor_hwm|ar-hard|agentrun-monitor VmHWM, hardened, after the exec runs|KiB|0"
  "7|monitor_hwm|ar-pass|agentrun-monitor VmHWM, passthrough|KiB|0"
  "8|cold|sandbox|python3 -c pass: agentrun sandbox|ms|1"
  "8|cold|bwrap|python3 -c pass: bubblewrap --unshare-all|ms|1"
  "8|cold|host|python3 -c pass: host, no sandbox|ms|1"
)

table() {
  local r num m v label unit d
  echo "| # | measure | unit | median | × crun | × runc | × ref | rounds | min–max |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---|"
  for r in "${ROWS[@]}"; do
    IFS='|' read -r num m v label unit d <<<"$r"
    row "$num" "$m" "$v" "$label" "$unit" "$d"
  done
}

# target LABEL FIGURE-TEXT MET(yes/no/"")
target() { printf '| %s | %s | %s |\n' "$1" "$2" "${3:-–}"; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "–"; else print (a <= b ? "yes" : "no") }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print ""; else printf "%.2f", a - b }'; }

targets() {
  local lc fl ex sc_a sc_s sc_r au rss mon cold
  echo "| target (issue 7) | measured in this run | met |"
  echo "|---|---|---|"
  lc=$(ratio "$(st lifecycle ar-hard)" "$(st lifecycle crun)")
  target "hardened lifecycle ≤ 0.8 × crun" "$lc × crun" "$(le "$lc" 0.8)"
  lc=$(ratio "$(st isolated ar-hard)" "$(st isolated crun)")
  target "… the same, runs that arrive alone (1b)" "$lc × crun" "$(le "$lc" 0.8)"
  fl=$(ratio "$(st lifecycle ar-hard)" "$(st lifecycle floor)")
  target "hardened lifecycle ≤ 2 × raw floor" "$fl × floor" "$(le "$fl" 2)"
  ex=$(ratio "$(st exec ar-hard)" "$(st exec crun)")
  target "exec ≤ crun's exec" "$ex × crun (hardened)" "$(le "$ex" 1)"
  sc_r=$(minus "$(st getppid runc-docker)" "$(st getppid runc-none)")
  sc_a=$(minus "$(st getppid ar-hard)" "$(st getppid runc-none)")
  sc_s=$(minus "$(st getppid ar-hard-docker)" "$(st getppid runc-none)")
  target "seccomp cost per syscall ≤ runc + Docker's profile" \
    "agent filter +$(fmt "$sc_a" 1) ns, stacked on Docker's +$(fmt "$sc_s" 1) ns; runc + Docker +$(fmt "$sc_r" 1) ns (over no seccomp)" \
    "$(le "$sc_a" "$sc_r")"
  au=$(minus "$(st audit ar-hard)" "$(st audit ar-noaudit)")
  target "audit ≤ 30 µs per exec" "$(fmt "$au" 1) µs (audit on − off)" "$(le "$au" 30)"
  rss=$(ratio "$(st rss_create ar-hard)" "$(st rss_create crun)")
  target "agentrun peak RSS ≤ crun's" "$(st rss_create ar-hard) KiB = $rss × crun" "$(le "$rss" 1)"
  mon=$(st monitor_hwm ar-hard)
  target "monitor ≤ 1 MiB" "${mon:-–} KiB" "$(le "$mon" 1024)"
  cold=$(ratio "$(st cold sandbox)" "$(st cold bwrap)")
  target "sandbox python3 cold start ≤ 1.2 × bubblewrap" "$cold × bwrap" "$(le "$cold" 1.2)"
}

header() {
  local cpu
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  echo "# agentrun benchmarks"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), \`make bench\` (contrib/bench/run.sh): $(nproc) × $cpu, kernel $(uname -r)."
  echo "$("$AGENTRUN" --version 2>&1 | head -n1); $(crun --version | head -n1); $(runc --version | head -n1);"
  echo "$(bwrap --version 2>&1 | head -n1). Docker's seccomp profile: ${DOCKER_PROFILE:-?}."
  echo
  echo "Median of $ROUNDS rounds; in each round the runtimes alternate, in an order that rotates."
  echo "Per round: $N lifecycles, splits and execs; $ISO_N isolated runs, each after $ISO_MS ms idle;"
  echo "$TP_N containers per throughput figure;"
  echo "$SYSCALLS getppid() calls; $EXECS execs in the shell loop; $COLD_N python3 starts."
  echo "× crun / × runc: this figure over crun's / runc's of the same row group in this run (for"
  echo "seccomp, over crun / runc with Docker's profile). × ref: over the raw floor (1, 4), the"
  echo "no-seccomp baseline (5), audit off (6) or bubblewrap (8). ↑: higher is better."
  echo "crun runs in a private mount namespace with /sys/fs/cgroup/unified unmounted (crun 1.8.1"
  echo "refuses hybrid cgroups); the whole timing loop runs in there, so it costs crun nothing."
  echo "Every runtime keeps its state (and agentrun its audit log) on a private tmpfs, as on /run."
  echo "The agentrun-monitor runs only when there is an audit log or a timeout: none for passthrough."
  echo "CPU time per run: user + system time of every process of the run (runtime, monitor,"
  echo "container), from wait4; kernel work done later in kworkers (netns teardown) is not in it."
  echo "Wall-clock figures stretch on a loaded host; CPU times and the getppid figures much less."
  echo "Load average (1 min) at the start and end: ${LOAD_START:-?} / ${LOAD_END:-?}; ${ELAPSED:-?} s in all."
  echo
}

# chart DIR: gnuplot data files and the PNG
chart() {
  local d=$W/plot out=$1 v m
  mkdir -p "$d"
  {
    echo "step agentrun-hardened agentrun-passthrough crun runc floor"
    for m in lifecycle isolated create start delete exec; do
      printf '%s' "$m"
      for v in ar-hard ar-pass crun runc floor; do printf ' %s' "$(st $m $v || true)"; done
      echo
    done
  } | awk '{ for (i = 1; i <= 6; i++) if ($i == "") $i = "-"; print }' >"$d/lat.dat"
  {
    echo "workers agentrun-hardened agentrun-passthrough crun runc floor"
    for m in tp1 tp2; do
      printf '%s' "$([ $m = tp1 ] && echo 1-worker || echo 2-workers)"
      for v in ar-hard ar-pass crun runc floor; do printf ' %s' "$(st $m $v)"; done
      echo
    done
  } | awk '{ for (i = 1; i <= 6; i++) if ($i == "") $i = "-"; print }' >"$d/tp.dat"
  single() { # metric file label:variant...
    local metric=$1 file=$2 lv
    shift 2
    : >"$d/$file"
    for lv in "$@"; do
      local val
      val=$(st "$metric" "${lv#*:}")
      [ -z "$val" ] || echo "\"${lv%%:*}\" $val" >>"$d/$file"
    done
  }
  single getppid sc.dat "ar agent:ar-hard" "ar agent+docker:ar-hard-docker" \
    "ar docker:ar-pass-docker" "crun docker:crun-docker" "runc docker:runc-docker" \
    "none:runc-none"
  single audit au.dat "ar audit on:ar-hard" "ar audit off:ar-noaudit" "crun:crun" "runc:runc"
  single rss_create rss.dat "ar hardened:ar-hard" "ar passthrough:ar-pass" "crun:crun" \
    "runc:runc"
  single monitor_hwm mon.dat "monitor:ar-hard"
  cat "$d/mon.dat" >>"$d/rss.dat"
  single cold cold.dat "agentrun sandbox:sandbox" "bwrap:bwrap" "host:host"
  {
    cat <<EOF
set terminal pngcairo size 1500,1300 font "sans,10"
set output "$out"
set datafile missing "-"
set style fill solid 0.85 border -1
set grid ytics
set key below horizontal
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set multiplot layout 3,2 title "agentrun vs crun vs runc: median of $ROUNDS rounds ($(uname -r), $(nproc) CPUs)"
set style data histograms
set style histogram clustered gap 1
EOF
    has_data "$d/lat.dat" && cat <<EOF
set title "Latency per operation (ms, lower is better)"
plot for [i=2:6] "$d/lat.dat" using i:xtic(1) title columnheader(i)
EOF
    has_data "$d/tp.dat" && cat <<EOF
set title "Throughput (containers/s over $TP_N, higher is better)"
plot for [i=2:6] "$d/tp.dat" using i:xtic(1) title columnheader(i)
EOF
    echo 'unset key; set style data boxes; set boxwidth 0.6; set xtics rotate by -20'
    bars "$d/sc.dat" "getppid() under seccomp (ns per call)" "#4477aa" "%.1f"
    bars "$d/au.dat" "exec of /bin/true in a shell loop (µs per exec)" "#ee6677" "%.0f"
    bars "$d/rss.dat" "Peak RSS of create, and the monitor's VmHWM (KiB)" "#228833" "%.0f"
    bars "$d/cold.dat" "python3 -c pass cold start (ms)" "#ccbb44" "%.1f"
    echo 'unset multiplot'
  } >"$d/plot.gp"
  gnuplot "$d/plot.gp" >"$d/gnuplot.log" 2>&1 || log "warning: gnuplot failed (see $d/gnuplot.log)"
}

# has_data FILE: a multi-series data file (header line first) holds at least one figure
has_data() {
  awk 'NR > 1 { for (i = 2; i <= NF; i++) if ($i != "-") found = 1 } END { exit !found }' "$1"
}

# bars FILE TITLE COLOR LABEL-FORMAT: one single-series panel, when FILE has data
bars() {
  [ -s "$1" ] || return 0
  cat <<EOF
set title "$2"
plot "$1" using 0:2:xtic(1) with boxes lc rgb "$3", \\
     "" using 0:2:(sprintf("$4", \$2)) with labels offset 0,0.8
EOF
}

# report RAW OUTDIR
report() {
  local raw=$1 out=$2
  STATS=$W/stats.tsv
  summarize "$raw" >"$STATS"
  mkdir -p "$out"
  {
    header
    table
    echo
    targets
  } >"$out/results.md"
  cp "$raw" "$out/results-raw.tsv"
  chart "$out/results.png"
  cat "$out/results.md"
  log "wrote $out/results.md, $out/results.png and $out/results-raw.tsv"
}
