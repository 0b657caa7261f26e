# weaklink's CMake package: weaklink_check(), a post-link gate that runs `weaklink check` on a
# target's linked image and fails the build on a verdict that fails the check (docs/cmake.md).
#
#   find_package(weaklink 0.1 CONFIG REQUIRED)      # cmake -Dweaklink_DIR=$(weaklink --cmake-dir)
#   weaklink_check(<target>
#     ACCELERATOR <ethos-u..> SYSTEM_CONFIG <vela.ini system config> MEMORY_MODE <memory mode>
#     [SOC <preset|file.toml|zephyr.dts>] [VELA_INI <file>] [ARENA <symbol|section|addr:size>]
#     [MAP <ld -Map file>] [SARIF <file>] [FAIL_ON <verdict>...] [ALLOW_UNKNOWN]
#     [OPTIONS <further weaklink check arguments>...])
#
# The check runs as a POST_BUILD step of <target> when <target> is defined in the calling
# directory, else (CMake allows POST_BUILD steps only there: Zephyr's zephyr_final) as the
# target <target>_weaklink_check of the default build, which depends on <target>.
#
# The weaklink it runs: WEAKLINK_EXECUTABLE when set (a cache variable: a path, or a command
# list such as "python3;-m;weaklink.cli"), else the first of these that serves this very
# directory (its `--cmake-dir` prints it): the console script installed beside this package (the
# bin/ or Scripts/ of the prefix or venv whose site-packages holds it), then `weaklink` on PATH.
# Nothing is written into the package: an installed package is not ours to write.
cmake_minimum_required(VERSION 3.20)
include_guard(GLOBAL)

set(WEAKLINK_EXECUTABLE "" CACHE STRING
    "the weaklink command weaklink_check() runs (empty: the weaklink whose package this is)")

if(WEAKLINK_EXECUTABLE)
  set(WEAKLINK_COMMAND ${WEAKLINK_EXECUTABLE})
  list(GET WEAKLINK_COMMAND 0 _weaklink_program)
  if(NOT EXISTS "${_weaklink_program}")
    set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
    set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
        "weaklink: no weaklink executable (from WEAKLINK_EXECUTABLE: \"${_weaklink_program}\"): "
        "give -DWEAKLINK_EXECUTABLE=<path of weaklink>")
    return()
  endif()
else()
  # <prefix>/lib/pythonX.Y/site-packages/weaklink/cmake (POSIX), <prefix>/Lib/site-packages/... (Windows)
  get_filename_component(_weaklink_posix_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../../.." ABSOLUTE)
  get_filename_component(_weaklink_windows_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
  unset(_weaklink_candidates)
  find_program(_weaklink_beside weaklink
               PATHS "${_weaklink_posix_prefix}/bin" "${_weaklink_windows_prefix}/Scripts" NO_DEFAULT_PATH)
  find_program(_weaklink_on_path weaklink)
  foreach(_weaklink_candidate IN ITEMS "${_weaklink_beside}" "${_weaklink_on_path}")
    if(_weaklink_candidate AND NOT _weaklink_candidate IN_LIST _weaklink_candidates)
      list(APPEND _weaklink_candidates "${_weaklink_candidate}")
    endif()
  endforeach()
  unset(_weaklink_beside CACHE)
  unset(_weaklink_on_path CACHE)
  file(REAL_PATH "${CMAKE_CURRENT_LIST_DIR}" _weaklink_here)
  unset(WEAKLINK_COMMAND)
  set(_weaklink_seen "")
  foreach(_weaklink_candidate IN LISTS _weaklink_candidates)
    execute_process(COMMAND "${_weaklink_candidate}" --cmake-dir RESULT_VARIABLE _weaklink_status
                    OUTPUT_VARIABLE _weaklink_dir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_weaklink_status EQUAL 0 AND IS_DIRECTORY "${_weaklink_dir}")
      file(REAL_PATH "${_weaklink_dir}" _weaklink_dir)
    endif()
    if(_weaklink_status EQUAL 0 AND _weaklink_dir STREQUAL _weaklink_here)
      set(WEAKLINK_COMMAND "${_weaklink_candidate}")
      break()
    endif()
    string(APPEND _weaklink_seen " ${_weaklink_candidate} serves \"${_weaklink_dir}\";")
  endforeach()
  if(NOT WEAKLINK_COMMAND)
    set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
    set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
        "weaklink: no weaklink executable serves this package (${_weaklink_here}): none beside it "
        "in ${_weaklink_posix_prefix}/bin, and on PATH:${_weaklink_seen} put that weaklink on PATH "
        "or give -DWEAKLINK_EXECUTABLE=<path>")
    return()
  endif()
endif()

# Read by weaklink_check() wherever it is called (variables here are the find_package caller's).
set_property(GLOBAL PROPERTY WEAKLINK_COMMAND "${WEAKLINK_COMMAND}")
set_property(GLOBAL PROPERTY WEAKLINK_GATE_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/weaklink_gate.cmake")

function(weaklink_check target)
  cmake_parse_arguments(PARSE_ARGV 1 WL "ALLOW_UNKNOWN"
    "ACCELERATOR;SYSTEM_CONFIG;MEMORY_MODE;SOC;VELA_INI;ARENA;MAP;SARIF" "FAIL_ON;OPTIONS")
  if(WL_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "weaklink_check(${target}): unexpected arguments: ${WL_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "weaklink_check(${target}): no such target (call it after add_executable)")
  endif()
  foreach(required ACCELERATOR SYSTEM_CONFIG MEMORY_MODE)
    if(NOT WL_${required})
      message(FATAL_ERROR "weaklink_check(${target}): ${required} is required "
                          "(the Vela configuration the model was compiled for)")
    endif()
  endforeach()
  foreach(verdict IN LISTS WL_FAIL_ON)
    if(NOT verdict MATCHES "^(hang|error|wrong|unknown)$")
      message(FATAL_ERROR "weaklink_check(${target}): FAIL_ON ${verdict} is no failing verdict "
                          "(verdicts: hang error wrong unknown)")
    endif()
  endforeach()
  if(WL_ALLOW_UNKNOWN AND "unknown" IN_LIST WL_FAIL_ON)
    message(FATAL_ERROR "weaklink_check(${target}): ALLOW_UNKNOWN contradicts FAIL_ON unknown")
  endif()

  # Inputs are relative to the calling CMakeLists.txt, outputs to its build directory; a value
  # that starts with a generator expression is passed as it is.
  foreach(name VELA_INI SOC MAP SARIF)
    set(value "${WL_${name}}")
    if(NOT value OR IS_ABSOLUTE "${value}" OR value MATCHES "^\\$<")
      continue()
    endif()
    if(name STREQUAL "SOC" AND NOT value MATCHES "\\.(toml|dts)$")
      continue()                        # a preset's name (npu/data/soc.toml)
    endif()
    if(name MATCHES "^(MAP|SARIF)$")
      set(WL_${name} "${CMAKE_CURRENT_BINARY_DIR}/${value}")
    else()
      set(WL_${name} "${CMAKE_CURRENT_SOURCE_DIR}/${value}")
    endif()
  endforeach()

  set(args check "$<TARGET_FILE:${target}>" --accelerator "${WL_ACCELERATOR}"
      --system-config "${WL_SYSTEM_CONFIG}" --memory-mode "${WL_MEMORY_MODE}")
  foreach(pair SOC:--soc VELA_INI:--vela-ini ARENA:--arena MAP:--map SARIF:--sarif)
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 name)
    list(GET pair 1 option)
    if(WL_${name})
      list(APPEND args ${option} "${WL_${name}}")
    endif()
  endforeach()
  # Always stated, so that the report ends with the gate's line ("gate: failed: verdict hang").
  if(NOT WL_FAIL_ON)
    set(WL_FAIL_ON hang error wrong unknown)
    if(WL_ALLOW_UNKNOWN)
      list(REMOVE_ITEM WL_FAIL_ON unknown)
    endif()
  endif()
  list(REMOVE_DUPLICATES WL_FAIL_ON)
  list(JOIN WL_FAIL_ON "," fail_on)
  list(APPEND args --fail-on "${fail_on}")
  list(APPEND args ${WL_OPTIONS})

  get_property(command GLOBAL PROPERTY WEAKLINK_COMMAND)
  get_property(gate GLOBAL PROPERTY WEAKLINK_GATE_SCRIPT)
  set(comment "weaklink check: ${target} (${WL_ACCELERATOR}, ${WL_SYSTEM_CONFIG}, ${WL_MEMORY_MODE})")
  # The step's arguments in a file rewritten only when they change: a build after a change of
  # weaklink_check()'s arguments checks the image again.
  set(state "${CMAKE_CURRENT_BINARY_DIR}/weaklink_check/${target}")
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/weaklink_check")
  file(GENERATE OUTPUT "${state}.args" CONTENT "${command};${args}\n")
  get_target_property(defined_in ${target} BINARY_DIR)
  if(defined_in STREQUAL CMAKE_CURRENT_BINARY_DIR)
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${state}.args")
    # A POST_BUILD step of the link. weaklink_gate.cmake moves a rejected image aside: without
    # that, the next build would find the output up to date and skip the gate.
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND "${CMAKE_COMMAND}" -P "${gate}" -- ${command} ${args}
      WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
      COMMENT "${comment}" VERBATIM)
  else()
    # CMake attaches POST_BUILD steps only to targets of the current directory (Zephyr's
    # zephyr_final is defined in ${ZEPHYR_BASE}'s): a step of the default build after the link,
    # whose stamp is written only when the check passes, so that a rejected image is checked
    # again by the next build.
    set(stamp "${state}.passed")
    add_custom_command(OUTPUT "${stamp}"
      COMMAND "${CMAKE_COMMAND}" "-DWEAKLINK_STAMP=${stamp}" -P "${gate}" -- ${command} ${args}
      DEPENDS ${target} "$<TARGET_FILE:${target}>" "${state}.args"
      WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
      COMMENT "${comment}" VERBATIM)
    add_custom_target(${target}_weaklink_check ALL DEPENDS "${stamp}")
  endif()
endfunction()
