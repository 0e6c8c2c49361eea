# The stages of scripts/test.sh, declared once: test.sh runs them in the table's order (with
# --list it prints each one's commands instead), scripts/reliability.sh takes its builds and its
# fuzz runs from here, and scripts/check_docs.py holds the README's list of stages to the table.
# Source it from the checkout's root (the sanitizers' suppression files are named by $PWD).
#
# A stage prints "== HEADING" (if it has one), configures BUILD and builds its TARGETS (if any;
# "all": the default target), then runs its function stage_NAME if there is one, else
# BUILD/ccfs_tests --gtest_brief=1 with the variables of the array ENV in its environment ("-":
# none) and the filter FILTER ("-": every test).

jobs=$(nproc)
listing=0  # 1: run prints each command instead of running it
fuzz_seconds=${CCFS_FUZZ_SECONDS:-20}
fuzz_targets=(config control trace cache_file)  # fuzz/NAME_fuzzer.cc, seeded from fuzz/corpus/NAME

# The tests' filters. The mount tests (every test that mounts, each raw tier's and transport's);
# on io_uring also the bad-input and transport tests; under TSan the engine and pool tests, and a
# shorter list of mount tests (the daemon under TSan is slow).
mount_filter='*Mount*:DaemonTest.*:PosixTest.*:KillPrivTest.*:CreateAsCallerTest.*:UnderneathTest.*:IntegrityTest.*:CrashTest.*:PathsTest.*:PressureTest.*'
uring_filter="$mount_filter:BadInputTest.*:Transport*"
tsan_filter='EngineTest.*:EngineRunTest.*:WarmTest.*:PinTest.*:*PersistEngineTest.*:AdmissionEngineTest.*:FrequencyEngineTest.*:MissRatioCurve*:SplitTuner*:CompressionPool*:LatencyHistogram*:RequestStats*'
tsan_mount_filter='*Mount*:DaemonTest.*:PosixTest.*:UnderneathTest.*:IntegrityTest.*'
# scripts/reliability.sh's longer runs: the reliability and POSIX suites.
reliability_filter='PosixTest.*:IntegrityTest.*:CrashTest.*:UnderneathTest.*:PressureTest.*:PathsTest.*:BadInputTest.*'

# The tests' environments. The mounts of every stage but kernel's run with raw_tier = daemon,
# named (the default is kernel): the tests that count reads at the daemon were written for it,
# and the kernel stage runs the mount tests in the default mode.
daemon_env=(CCFS_TEST_RAW_TIER=daemon)
kernel_env=(CCFS_TEST_RAW_TIER=kernel)
uring_env=(CCFS_TEST_TRANSPORT=uring "${daemon_env[@]}")
tsan_env=(TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp")
san_env=(ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0"
         LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
         UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
         "${tsan_env[@]}" "${daemon_env[@]}")

# NAME        | BUILD      | TARGETS             | ENV        | FILTER            | HEADING
stage_table=$(cat <<EOF
includes      | -          | -                   | -          | -                 | -
setup         | -          | -                   | -          | -                 | -
docs          | -          | -                   | -          | -                 | docs: the README's Layout against the tree, references, versions
build         | build      | all                 | -          | -                 | -
unit          | build      | -                   | daemon_env | -                 | unit and mount tests
deb           | build      | -                   | -          | -                 | Debian package: cpack from build/, control fields, files, --version, man pages
kernel        | build      | -                   | kernel_env | mount_filter      | mount, POSIX and coherence tests again with raw_tier = kernel (the kernel's page cache as the raw tier)
many-files    | build      | -                   | -          | -                 | a tree of 50,000 files walked, stat'ed and read whole under a descriptor limit of 1024, each raw tier
uring         | build      | -                   | uring_env  | uring_filter      | mount, POSIX and reliability tests again on transport = uring (FUSE over io_uring)
tsan          | build-tsan | ccfs_tests          | tsan_env   | tsan_filter       | ThreadSanitizer: engine, compression pool, stats
tsa           | build-tsa  | ccfs_core ccfs_fuse | -          | -                 | clang thread-safety analysis (compile only): ccfs_core, ccfs_fuse
shared-store  | -          | -                   | -          | -                 | shared store (sshfs, GlusterFS): another client's changes and store outages, ~2 min
asan          | build-asan | ccfs_tests          | san_env    | -                 | ASan+UBSan: unit, mount, POSIX and reliability tests
tsan-mount    | build-tsan | -                   | san_env    | tsan_mount_filter | ThreadSanitizer: mount and POSIX tests (daemon under TSan)
fuzz          | build-fuzz | ${fuzz_targets[*]/%/_fuzzer} | - | -             | libFuzzer smoke: $fuzz_seconds s per target
EOF
)

# build_config FOLDER: sets cc (the compiler's variables) and flags (cmake's) of that build.
build_config() {
  cc=()
  case $1 in
    build) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    build-tsan)
      flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCFS_SANITIZE=thread
             -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1") ;;
    build-tsa)
      cc=(CC=clang CXX=clang++)
      flags=(-DCMAKE_BUILD_TYPE=Debug -DCCFS_THREAD_SAFETY=ON) ;;
    build-asan)
      cc=(CC=clang CXX=clang++)
      flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCFS_SANITIZE=address
             -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1") ;;
    build-fuzz)
      cc=(CC=clang CXX=clang++)
      flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
             -DCCFS_FUZZ=ON) ;;
    *) echo "stages.sh: no build $1" >&2; return 1 ;;
  esac
}

# shell_words WORD...: the words as one shell command line (quoted where the shell needs it; a
# NAME=VALUE word has its value quoted). $work stays as it is: the listing's name for a temporary
# directory.
shell_words() {
  local w out=() plain='^[][A-Za-z0-9_./=:,+@%$-]*$'
  for w in "$@"; do
    if [[ $w =~ $plain ]]; then out+=("$w")
    elif [[ $w =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then out+=("${BASH_REMATCH[1]}=${BASH_REMATCH[2]@Q}")
    else out+=("${w@Q}"); fi
  done
  echo "${out[*]}"
}

# run [--quiet] [NAME=VALUE...] COMMAND...: runs COMMAND with those variables in its environment
# (--quiet: its standard output to /dev/null); with listing=1 prints the command line instead.
run() {
  local quiet=0
  [ "$1" = --quiet ] && { quiet=1; shift; }
  if ((listing)); then
    if ((quiet)); then echo "$(shell_words "$@") >/dev/null"; else shell_words "$@"; fi
  elif [[ $1 == *=* ]]; then
    if ((quiet)); then env "$@" >/dev/null; else env "$@"; fi
  else
    if ((quiet)); then "$@" >/dev/null; else "$@"; fi
  fi
}

# lock_folder FOLDER VAR: creates FOLDER and takes FOLDER/.lock, waiting while another holds it;
# the variable VAR gets the lock's descriptor (closing it lets go).
lock_folder() {
  local -n lock_fd=$2
  mkdir -p "$1"
  exec {lock_fd}>"$1/.lock"
  flock "$lock_fd"
}

# build_in FOLDER TARGET...: configures FOLDER (build_config), builds TARGETs ("all": the default).
# It first takes FOLDER/.lock, so it waits for a background build of FOLDER (prebuild_start) to
# end; the background's own calls hold the lock already (prebuilding=1).
build_in() {
  local dir=$1 cc flags lock=
  shift
  build_config "$dir"
  if ((!listing)) && [ -z "${prebuilding:-}" ]; then lock_folder "$dir" lock; fi
  run --quiet "${cc[@]}" cmake -S . -B "$dir" -G Ninja "${flags[@]}"
  if [ "$*" = all ]; then
    run cmake --build "$dir" -j"$jobs"
  else
    run cmake --build "$dir" -j"$jobs" --target "$@"
  fi
  [ -z "$lock" ] || exec {lock}>&-
}

# prebuild_start ROW...: the builds of the stages in those rows of the table (each folder once,
# the first row's targets), compiled one after another in the background at idle priority
# (SCHED_IDLE and the idle I/O class: a test that wants a CPU or the disk gets it first). The test
# stages before them mostly wait on mounts, servers and timeouts, and on 2 CPUs the sanitizer
# builds were half of test.sh's time. Each folder's lock is taken here, before the background
# starts, and let go when its build ends, so a stage's build_in waits for it and then finds
# nothing left to do; after a failed build it builds again in the open, the errors in the stage's
# output. The background's output: FOLDER/.prebuild.log. stages_exit stops what is still running.
prebuild_pid=
prebuild_start() {
  local row name dir targets env filter heading dirs=() what=() fds=() fd i
  for row; do
    IFS='|' read -r name dir targets env filter heading <<<"$row"
    trim dir targets
    [ "$dir" = - ] || [ "$dir" = build ] || [ "$targets" = - ] && continue
    [[ " ${dirs[*]} " == *" $dir "* ]] && continue
    dirs+=("$dir"); what+=("$targets")
  done
  ((${#dirs[@]})) || return 0
  if ((listing)); then
    echo "(from here on, in the background at idle priority: ${dirs[*]})"
    return 0
  fi
  for dir in "${dirs[@]}"; do
    lock_folder "$dir" fd
    fds+=("$fd")
  done
  set -m  # the background in a process group of its own, which stages_exit can stop whole
  (
    set +m
    prebuilding=1
    chrt --idle -p 0 "$BASHPID" >/dev/null
    ionice -c 3 -p "$BASHPID" 2>/dev/null || true
    for i in "${!dirs[@]}"; do
      # shellcheck disable=SC2086  # TARGETS is a list of words
      build_in "${dirs[$i]}" ${what[$i]} >"${dirs[$i]}/.prebuild.log" 2>&1 || true
      flock -u "${fds[$i]}"
    done
  ) &
  prebuild_pid=$!
  set +m
  for fd in "${fds[@]}"; do exec {fd}>&-; done
}

# stages_exit: however test.sh ends, the io_uring switch as it was found and no background build
# left running.
stages_exit() {
  [ -z "${uring_was:-}" ] || echo "$uring_was" > "$uring_switch"
  [ -z "$prebuild_pid" ] || kill -- "-$prebuild_pid" 2>/dev/null || true
}

# fuzz_run SECONDS [LIMIT]: each fuzz target of build-fuzz for SECONDS from its seed corpus, its
# new inputs in a directory of its own (killed after LIMIT seconds if given); a failure prints the
# log's tail and where the artifacts are, and exits 1.
fuzz_run() {
  local seconds=$1 limit=${2:-} name work
  for name in "${fuzz_targets[@]}"; do
    if ((listing)); then
      work='$work'
      echo 'work=$(mktemp -d)'
    else
      work=$(mktemp -d)
    fi
    local cmd=(${limit:+timeout -k 10 "$limit"} "build-fuzz/fuzz/${name}_fuzzer"
               -max_total_time="$seconds" -rss_limit_mb=4096 -artifact_prefix="$work/"
               "$work" "fuzz/corpus/$name")
    if ((listing)); then echo "$(shell_words "${cmd[@]}") >$work/log 2>&1"; continue; fi
    if ! "${cmd[@]}" >"$work/log" 2>&1; then
      tail -n 60 "$work/log"; echo "fuzz: $name failed; artifacts in $work" >&2; exit 1
    fi
    echo "fuzz $name: $(grep -a '^Done' "$work/log"); corpus $(ls "$work" | wc -l) new inputs"
    rm -rf "$work"
  done
}

stage_includes() { run scripts/check_includes.py; }  # the rooms' floors (docs/ARCHITECTURE.md)
stage_setup() { run scripts/setup.sh; }
stage_docs() { run scripts/check_docs.py; }
stage_build() { :; }
stage_deb() { run tests/packaging/deb_test.sh "$stage_build"; }
stage_shared_store() { run tests/stores/shared_store_test.sh; }
# The other stages walk trees of 8,000 files (many_files_test.cc); scripts/reliability.sh a million.
stage_many_files() {
  local mode
  for mode in daemon kernel; do
    run CCFS_MANY_FILES=50000 CCFS_TEST_RAW_TIER=$mode build/ccfs_tests --gtest_brief=1 \
      --gtest_filter=ManyFilesMountTest.WalkedStatAndReadUnderALimitOf1024
  done
}
stage_tsa() { :; }  # the build is the check: -Wthread-safety as errors
stage_fuzz() { fuzz_run "$fuzz_seconds"; }
# (kernel: tests that count every read pin raw_tier = daemon themselves; the changes-underneath
# tests wait out attr_timeout, the kernel mode's bound: testing/command.h AwaitChangeUnderneath.)

# FUSE over io_uring needs Linux 6.14+ with CONFIG_FUSE_IO_URING and root: the kernel's switch is
# turned on for this stage and left as it was found afterwards (connections that already use a
# ring keep it).
uring_switch=/sys/module/fuse/parameters/enable_uring
stage_uring() {
  if ((listing)); then
    echo "(only where $uring_switch is writable: Y for this stage, then as it was found)"
    gtest_stage
  elif [[ -w $uring_switch ]]; then
    uring_was=$(cat "$uring_switch")  # stages_exit puts it back if the stage fails
    echo Y > "$uring_switch"
    gtest_stage
    echo "$uring_was" > "$uring_switch"
    uring_was=
  else
    echo "(skipped: $uring_switch is missing or not writable: no FUSE over io_uring here)"
  fi
}

# gtest_stage: the current stage's ccfs_tests run (BUILD, ENV, FILTER of its row).
gtest_stage() {
  local vars=() args=(--gtest_brief=1)
  [ "$stage_env" = - ] || eval 'vars=("${'"$stage_env"'[@]}")'
  [ "$stage_filter" = - ] || args+=(--gtest_filter="${!stage_filter}")
  run "${vars[@]}" "$stage_build/ccfs_tests" "${args[@]}"
}

# run_stages: every stage in order (listing=1: their commands), then "== all tests passed". The
# table is read whole first: the stages' commands get the script's standard input, not the table.
run_stages() {
  local rows row stage_name stage_build targets stage_env stage_filter heading n=0
  mapfile -t rows <<<"$stage_table"
  ((listing)) || trap stages_exit EXIT
  for row in "${rows[@]}"; do
    n=$((n + 1))
    IFS='|' read -r stage_name stage_build targets stage_env stage_filter heading <<<"$row"
    trim stage_name stage_build targets stage_env stage_filter heading
    if ((listing)); then
      echo "== [$stage_name]$([ "$heading" = - ] || echo " $heading")"
    elif [ "$heading" != - ]; then
      echo "== $heading"
    fi
    [ "$targets" = - ] || build_in "$stage_build" $targets
    if declare -F "stage_${stage_name//-/_}" >/dev/null; then
      "stage_${stage_name//-/_}"
    else
      gtest_stage
    fi
    [ "$stage_name" != build ] || prebuild_start "${rows[@]:n}"
  done
  echo "== all tests passed"
}

# trim NAME...: the variables NAME... without their leading and trailing blanks.
trim() {
  local -n v
  for v; do v=${v#"${v%%[! ]*}"}; v=${v%"${v##*[! ]}"}; done
}
