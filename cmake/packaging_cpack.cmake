# Read by cpack at packaging time (CPACK_PROJECT_CONFIG_FILE, cmake/packaging.cmake).
# HOOKRELAY_DEB_VERSION=0.1.0+test1 make deb: another version from the same build (the package
# test's upgrade, a rebuild's "-2").
if(DEFINED ENV{HOOKRELAY_DEB_VERSION} AND NOT "$ENV{HOOKRELAY_DEB_VERSION}" STREQUAL "")
  set(CPACK_PACKAGE_VERSION "$ENV{HOOKRELAY_DEB_VERSION}")
  set(CPACK_DEBIAN_PACKAGE_VERSION "$ENV{HOOKRELAY_DEB_VERSION}")
endif()
