# Precompiled headers (HOOKRELAY_PCH, off by default; docs/development.md, "Precompiled headers").
#
# Every translation unit of ours includes much the same standard library and Boost.JSON headers,
# the tests GoogleTest too, and parsing them was most of each compile (scripts/time-trace-report).
# Two shared precompiled headers parse them once per build instead of once per file:
#   hookrelay_pch       every library under src/ (hookrelay_module)
#   hookrelay_test_pch  every test binary (hookrelay_test in tests/CMakeLists.txt)
# Each is built by a small object library and reused (REUSE_FROM) by the targets, which then must
# be compiled with the same flags and, for g++, the same definitions of every macro the headers
# read: hookrelay_pch_usage gives them all the same Boost.JSON definitions, and -Winvalid-pch
# (CMake adds it; an error under HOOKRELAY_WERROR) fails the build when g++ would silently parse
# the headers again instead. Only system headers go in here: a header of ours would make every file depend
# on it, and clang checks the files inside a PCH against their modification times.
#
# Off by default: a cold build is faster with it (on the measured sets g++ 17% less CPU, clang++
# 40% less time), but the PCH holds the build folder's absolute path, so
# a clean clone in another folder (CI) missed ccache on every file compiled against it, where
# without PCH it hits all of them. Until that is solved, ccache saves more than the PCH.
# g++ 12 also reports two -Warray-bounds false positives inside libstdc++ (policy_argument.cc)
# when the headers come from its PCH, which it hides when they are parsed as system headers.
option(HOOKRELAY_PCH "Precompiled headers for the libraries and the tests" OFF)

set(HOOKRELAY_PCH_HEADERS
    <algorithm> <atomic> <charconv> <chrono> <condition_variable> <cstdint> <cstring>
    <functional> <map> <memory> <mutex> <optional> <set> <sstream> <string> <string_view>
    <thread> <unordered_map> <utility> <variant> <vector>
    <boost/json.hpp>)

add_library(hookrelay_pch_usage INTERFACE)
target_link_libraries(hookrelay_pch_usage INTERFACE Boost::json)

# hookrelay_pch_target(NAME HEADERS ... LIBS ...): the object library that builds one PCH.
function(hookrelay_pch_target name)
  cmake_parse_arguments(P "" "" "HEADERS;LIBS" ${ARGN})
  set(src ${CMAKE_CURRENT_BINARY_DIR}/${name}.cc)
  if(NOT EXISTS ${src})
    file(WRITE ${src} "// The precompiled header of ${name} is built alongside this file.\n")
  endif()
  add_library(${name} OBJECT ${src})
  target_link_libraries(${name} PRIVATE hookrelay_pch_usage hookrelay_warnings ${P_LIBS})
  target_precompile_headers(${name} PRIVATE ${P_HEADERS})
  # Clang: no timestamps inside the PCH, so a ccache hit on it serves a fresh clone too.
  target_compile_options(${name} PRIVATE
    $<$<CXX_COMPILER_ID:Clang>:SHELL:-Xclang -fno-pch-timestamp>)
endfunction()

# hookrelay_use_pch(TARGET PCH): TARGET's files start from PCH's precompiled header.
function(hookrelay_use_pch target pch)
  if(HOOKRELAY_PCH)
    target_link_libraries(${target} PRIVATE hookrelay_pch_usage)
    target_precompile_headers(${target} REUSE_FROM ${pch})
  endif()
endfunction()
