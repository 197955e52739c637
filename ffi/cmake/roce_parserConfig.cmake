# CMake package of roce-parser's C and C++ interface, installed by `cargo cinstall` into
# <prefix>/share/cmake/roce_parser/ (ffi/README.md). Relocatable: everything is found from
# this file's own location, so a --destdir or a moved prefix works.
#
#   find_package(roce_parser 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE roce_parser::roce_parser)        # shared library
#   target_link_libraries(app PRIVATE roce_parser::roce_parser_static) # static library
#
# Set ROCE_PARSER_STATIC to ON before find_package to make roce_parser::roce_parser the static
# library. Headers: roce_parser.h (C99, C++11) and roce_parser.hpp (C++17).

# <prefix>/share/cmake/roce_parser -> <prefix>
get_filename_component(_roce_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

set(_roce_libdirs "${_roce_prefix}/lib" "${_roce_prefix}/lib64")
if(CMAKE_LIBRARY_ARCHITECTURE)
    list(APPEND _roce_libdirs "${_roce_prefix}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
endif()

find_path(ROCE_PARSER_INCLUDE_DIR roce_parser.h
    PATHS "${_roce_prefix}/include" NO_DEFAULT_PATH)
find_library(ROCE_PARSER_SHARED_LIBRARY
    NAMES libroce_parser.so libroce_parser.dylib roce_parser
    PATHS ${_roce_libdirs} NO_DEFAULT_PATH)
find_library(ROCE_PARSER_STATIC_LIBRARY
    NAMES libroce_parser.a roce_parser.lib
    PATHS ${_roce_libdirs} NO_DEFAULT_PATH)

set(roce_parser_FOUND TRUE)
if(NOT ROCE_PARSER_INCLUDE_DIR)
    set(roce_parser_FOUND FALSE)
    set(roce_parser_NOT_FOUND_MESSAGE "roce_parser.h not found under ${_roce_prefix}/include")
elseif(NOT ROCE_PARSER_SHARED_LIBRARY AND NOT ROCE_PARSER_STATIC_LIBRARY)
    set(roce_parser_FOUND FALSE)
    set(roce_parser_NOT_FOUND_MESSAGE "libroce_parser not found in ${_roce_libdirs}")
endif()

if(roce_parser_FOUND)
    # What the static library needs from the system (rustc --print native-static-libs).
    set(_roce_native "")
    if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
        set(_roce_native gcc_s util rt pthread m dl c)
    elseif(APPLE)
        set(_roce_native System c m)
    endif()

    if(ROCE_PARSER_SHARED_LIBRARY AND NOT TARGET roce_parser::roce_parser_shared)
        add_library(roce_parser::roce_parser_shared SHARED IMPORTED)
        set_target_properties(roce_parser::roce_parser_shared PROPERTIES
            IMPORTED_LOCATION "${ROCE_PARSER_SHARED_LIBRARY}"
            IMPORTED_SONAME "libroce_parser.so.0"
            INTERFACE_INCLUDE_DIRECTORIES "${ROCE_PARSER_INCLUDE_DIR}")
    endif()
    if(ROCE_PARSER_STATIC_LIBRARY AND NOT TARGET roce_parser::roce_parser_static)
        add_library(roce_parser::roce_parser_static STATIC IMPORTED)
        set_target_properties(roce_parser::roce_parser_static PROPERTIES
            IMPORTED_LOCATION "${ROCE_PARSER_STATIC_LIBRARY}"
            IMPORTED_LINK_INTERFACE_LANGUAGES "C"
            INTERFACE_INCLUDE_DIRECTORIES "${ROCE_PARSER_INCLUDE_DIR}"
            INTERFACE_LINK_LIBRARIES "${_roce_native}")
    endif()
    if(NOT TARGET roce_parser::roce_parser)
        if(TARGET roce_parser::roce_parser_shared AND NOT ROCE_PARSER_STATIC)
            add_library(roce_parser::roce_parser ALIAS roce_parser::roce_parser_shared)
        elseif(TARGET roce_parser::roce_parser_static)
            add_library(roce_parser::roce_parser ALIAS roce_parser::roce_parser_static)
        else()
            set(roce_parser_FOUND FALSE)
            set(roce_parser_NOT_FOUND_MESSAGE "ROCE_PARSER_STATIC is set but libroce_parser.a is not installed")
        endif()
    endif()
    unset(_roce_native)
endif()
unset(_roce_libdirs)
unset(_roce_prefix)
