#!/usr/bin/env bash
# Our own script, shaped as TFLM's tensorflow/lite/micro/testing/test_with_arm_corstone_300.sh:
# the same FVP command line (the MAC count from $MACS, TFLM's is 256), the log through tee,
# and the pass/fail decision on the pass string alone.
#  $1 - the binary, $2 - the string that says it passed, $3 - the log file.
set -e

BINARY_TO_TEST=${1}
PASS_STRING=${2}
MICRO_LOG_FILENAME=${3}

FVP="FVP_Corstone_SSE-300_Ethos-U55 "
FVP+="-C ethosu.num_macs=${MACS:-256} "
FVP+="-C mps3_board.visualisation.disable-visualisation=1 "
FVP+="-C mps3_board.telnetterminal0.start_telnet=0 "
FVP+='-C mps3_board.uart0.out_file="-" '
FVP+='-C mps3_board.uart0.unbuffered_output=1 '
FVP+='-C mps3_board.uart0.shutdown_on_eot=1 '
FVP+='--stat'
${FVP} ${BINARY_TO_TEST} | tee ${MICRO_LOG_FILENAME}

if grep -q "$PASS_STRING" ${MICRO_LOG_FILENAME}
then
  echo "$BINARY_TO_TEST: PASS"
  exit 0
else
  echo "$BINARY_TO_TEST: FAIL - '$PASS_STRING' not found in logs."
  exit 1
fi
