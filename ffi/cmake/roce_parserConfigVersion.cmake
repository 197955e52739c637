# Version file of the roce_parser CMake package (installed beside roce_parserConfig.cmake).
# ffi/tests/install-test.sh fails when this version differs from ffi/Cargo.toml's.
# Compatible: the same major version (the SONAME's number), at least the version asked for.
set(PACKAGE_VERSION "0.1.0")

if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL "0")
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
    if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
        set(PACKAGE_VERSION_EXACT TRUE)
    endif()
endif()

