# Runs the tapecheck command line and checks what it did (cmake -P, so ctest needs no shell):
#   TOOL          the tapecheck executable
#   ARGS          its arguments (a ;-list)
#   OUT           a scratch folder (values files and --json reports go there)
#   EXPECT_RC     the exit status it must return
#   EXPECT_REGEX  (optional) a regular expression its stdout must match
#   TWICE         (optional) run it twice with --json and require byte-identical reports
#   FIRST_EXTRA, SECOND_EXTRA  (optional, with TWICE) arguments only the first / second run gets
foreach(_v TOOL ARGS OUT EXPECT_RC)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "run_check.cmake: ${_v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})

function(run_once json result_var output_var)
  set(_args ${ARGS} ${ARGN} --out ${OUT}/values)
  if(json)
    list(APPEND _args --json ${json})
  endif()
  execute_process(COMMAND ${TOOL} ${_args}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  message("$ tapecheck ${_args}\n${_out}${_err}exit status ${_rc}")
  set(${result_var} ${_rc} PARENT_SCOPE)
  set(${output_var} "${_out}" PARENT_SCOPE)
endfunction()

if(TWICE)
  run_once(${OUT}/first.json _rc1 _out1 ${FIRST_EXTRA})
  run_once(${OUT}/second.json _rc2 _out2 ${SECOND_EXTRA})
  if(NOT _rc1 EQUAL EXPECT_RC OR NOT _rc2 EQUAL EXPECT_RC)
    message(FATAL_ERROR "expected exit status ${EXPECT_RC}, got ${_rc1} and ${_rc2}")
  endif()
  file(READ ${OUT}/first.json _a)
  file(READ ${OUT}/second.json _b)
  if(NOT _a STREQUAL _b)
    message(FATAL_ERROR "two runs with the same --seed wrote different --json reports")
  endif()
  if(NOT _out1 STREQUAL _out2)
    message(FATAL_ERROR "two runs with the same --seed printed different reports")
  endif()
  return()
endif()

run_once("" _rc _out)
if(NOT _rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "expected exit status ${EXPECT_RC}, got ${_rc}")
endif()
if(DEFINED EXPECT_REGEX AND NOT _out MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "the output does not match '${EXPECT_REGEX}'")
endif()
