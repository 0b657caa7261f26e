#!/usr/bin/env bash
# Our own script, shaped as ExecuTorch's backends/arm/scripts/run_fvp.sh: the FVP command lines
# it builds (semihosting with a cwd and a command line for a bundled program, --data, the time
# limit), the log through sed and tee with the FVP's status ignored, the bundled program's
# Test_result check, and the problem lines it greps for.
#   --elf=ELF [--data=FILE@ADDRESS] [--bundle-cwd=DIR --cmd-line=LINE] [--timeout=S] [--target=ethos-u55-128]
set -eu

elf_file=""; data_file=""; bundle_cwd=""; cmd_line=""; timeout="600"; target="ethos-u55-128"
for arg in "$@"; do
    case $arg in
      --elf=*) elf_file="${arg#*=}";;
      --data=*) data_file="--data ${arg#*=}";;
      --bundle-cwd=*) bundle_cwd="${arg#*=}";;
      --cmd-line=*) cmd_line="${arg#*=}";;
      --timeout=*) timeout="${arg#*=}";;
      --target=*) target="${arg#*=}";;
    esac
done
if [[ ${target} == *"ethos-u65"* ]]; then fvp_model=FVP_Corstone_SSE-300_Ethos-U65; else fvp_model=FVP_Corstone_SSE-300_Ethos-U55; fi
hash ${fvp_model} || { echo "Could not find ${fvp_model} on PATH"; exit 1; }
num_macs=$(echo ${target} | cut -d - -f 3)
log_file=$(mktemp)

if [[ -n "${bundle_cwd}" ]]; then
    ${fvp_model}                                                       \
        -C ethosu.num_macs=${num_macs}                                 \
        -C mps3_board.visualisation.disable-visualisation=1            \
        -C mps3_board.telnetterminal0.start_telnet=0                   \
        -C mps3_board.uart0.out_file='-'                               \
        -C mps3_board.uart0.shutdown_on_eot=1                          \
        -C cpu0.semihosting-enable=1                                   \
        -C cpu0.semihosting-stack_base=0                               \
        -C cpu0.semihosting-heap_limit=0                               \
        -C "cpu0.semihosting-cwd=${bundle_cwd}"                        \
        -C "ethosu.extra_args=--fast"                                  \
        -C "cpu0.semihosting-cmd_line=${cmd_line}"                     \
        -a "${elf_file}"                                               \
        --timelimit ${timeout} 2>&1 | sed 's/\r$//' | tee ${log_file} || true
    if grep -q "Test_result: PASS" "${log_file}"; then
        echo "Bundled I/O check PASSED"; rm "${log_file}"; exit 0
    elif grep -q "Test_result: FAIL" "${log_file}"; then
        echo "Bundled I/O check FAILED"; rm "${log_file}"; exit 1
    else
        echo "No Test_result line found in FVP output"; rm "${log_file}"; exit 1
    fi
fi

${fvp_model}                                            \
    -C ethosu.num_macs=${num_macs}                      \
    -C mps3_board.visualisation.disable-visualisation=1 \
    -C mps3_board.telnetterminal0.start_telnet=0        \
    -C mps3_board.uart0.out_file='-'                    \
    -C mps3_board.uart0.shutdown_on_eot=1               \
    -a "${elf_file}"                                    \
    ${data_file}                                        \
    --timelimit ${timeout} 2>&1 | sed 's/\r$//' | tee ${log_file} || true

echo "Checking for problems in log:"
problem_log=$(mktemp)
grep -E "^(F|E|\\[critical\\]|Hard fault.|Info: Simulation is stopping. Reason: CPU time has been exceeded.).*$" "${log_file}" > "${problem_log}" || true
if [[ -s "${problem_log}" ]]; then
    cat "${problem_log}"
    echo "Found ERROR"
    rm "${problem_log}" "${log_file}"
    exit 1
fi
echo "No problems found!"
rm "${problem_log}" "${log_file}"
