#!/bin/sh
# Installs (as root on Debian) or names (otherwise) the packages attnscope needs.
#   install-deps.sh run    what `make run` needs: compiler, ncursesw, OpenBLAS, LAPACKE, GSL,
#                          OpenSSL's libcrypto (the SHA-256 of a --weights checkpoint)
#   install-deps.sh check  the above plus what the tests need: cmocka, GNU parallel (for
#                          scripts/sweep-parallel.sh) and every program the tests run that a
#                          minimal Debian (debootstrap --variant=minbase) lacks: tmux, ps
#                          (procps), python3 and Debian's numpy (tests/cli/hf-forward.sh),
#                          valgrind, xmllint, clang (tests/cli/deps.sh
#                          checks this list against the test scripts); then, as root, it also
#                          tries a single-node Slurm and munge for tests/cli/slurm.sh, which
#                          says skipped where they cannot be installed
#   install-deps.sh slurm  the above plus Slurm and munge, required
#   install-deps.sh bench  the above plus Debian's numpy for the reference pipeline
#   install-deps.sh list MODE   prints MODE's packages (the optional too), one a line, and
#                               installs nothing
set -eu
mode=${1:-run}
list=false
if [ "$mode" = list ]; then
    list=true
    mode=${2:-run}
fi

optional=""
need="gcc make pkg-config libc6-dev libncurses-dev libopenblas-dev liblapacke-dev libgsl-dev libssl-dev"
case "$mode" in
run) ;;
check) need="$need libcmocka-dev tmux procps python3 python3-numpy valgrind clang libclang-rt-14-dev libxml2-utils parallel"
    optional="slurmctld slurmd slurm-client munge" ;;
slurm) need="$need libcmocka-dev tmux procps python3 valgrind clang libclang-rt-14-dev libxml2-utils parallel slurmctld slurmd slurm-client munge" ;;
bench) need="$need python3-numpy" ;;
*) echo "install-deps.sh: unknown mode '$mode' (accepted: run, check, slurm, bench, list MODE)" >&2; exit 2 ;;
esac
if $list; then
    # shellcheck disable=SC2086
    printf '%s\n' $need $optional
    exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps.sh: not a Debian system; make sure these (Debian names) are installed: $need" >&2
    exit 0
fi

not_installed() { # packages...
    for pkg in "$@"; do
        case "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" in
        *"install ok installed"*) ;;
        *) printf ' %s' "$pkg" ;;
        esac
    done
}
# What the tests can do without: tried as root, and a failure only means those tests say
# skipped.
# shellcheck disable=SC2086
missing_optional=$(not_installed $optional)
if [ -n "$missing_optional" ] && [ "$(id -u)" -eq 0 ]; then
    echo "install-deps.sh: trying the optional:$missing_optional"
    # shellcheck disable=SC2086
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            $missing_optional >/dev/null; }; then
        echo "install-deps.sh: could not install$missing_optional; their tests will say skipped"
    fi
fi
# shellcheck disable=SC2086
missing=$(not_installed $need)
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    echo "install-deps.sh: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
    echo "attnscope needs these Debian packages:$missing" >&2
    echo "Install them with:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi
