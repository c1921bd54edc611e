# The Debian package (make deb): install() rules for what goes in it, and CPack's DEB generator.
#
# Why CPack and not debhelper: CPack packages the build tree `make release` already made
# (build/release), while dpkg-buildpackage configures and compiles the whole project again in a
# tree of its own — on CI's 2 cores that second build would cost as much as the release build
# itself. What debhelper would add we do by hand in packaging/debian/: the maintainer scripts
# (dh_installsystemd's and adduser's parts, written out), the conffiles list; dpkg-shlibdeps
# still computes Depends (CPACK_DEBIAN_PACKAGE_SHLIBDEPS). docs/operations.md has the rest.
#
# These rules describe the package's layout (/usr/bin, /lib/systemd/system, /etc/hookrelay);
# `cmake --install` is not how hookrelay is meant to be installed otherwise.

set(HOOKRELAY_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)
set(HOOKRELAY_MAN_PAGE ${CMAKE_BINARY_DIR}/hookrelay.1.gz)

# hookrelay(1), from the binary's --help (packaging/make-man.sh, help2man). Not part of `all`:
# `make deb` builds it before packaging.
find_program(HOOKRELAY_HELP2MAN help2man)
if(HOOKRELAY_HELP2MAN)
  add_custom_command(
    OUTPUT ${HOOKRELAY_MAN_PAGE}
    COMMAND sh ${HOOKRELAY_PACKAGING_DIR}/make-man.sh $<TARGET_FILE:hookrelay> ${HOOKRELAY_MAN_PAGE}
    DEPENDS hookrelay ${HOOKRELAY_PACKAGING_DIR}/make-man.sh
    COMMENT "Generating hookrelay.1.gz from hookrelay --help"
    VERBATIM)
  add_custom_target(hookrelay_man DEPENDS ${HOOKRELAY_MAN_PAGE})
else()
  add_custom_target(hookrelay_man
    COMMAND ${CMAKE_COMMAND} -E echo "help2man is missing: scripts/install-deps installs it"
    COMMAND ${CMAKE_COMMAND} -E false)
endif()

# cpack's install step builds only what `make deb` built already (hookrelay, hookrelay_man), not
# `all`: in the test tree that would be every test.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
install(TARGETS hookrelay RUNTIME DESTINATION bin)
install(FILES ${HOOKRELAY_MAN_PAGE} DESTINATION share/man/man1 OPTIONAL)
install(FILES ${HOOKRELAY_PACKAGING_DIR}/hookrelay.service DESTINATION /lib/systemd/system
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
# 0640 in the package; postinst's dpkg-statoverride makes it root:hookrelay.
install(FILES ${HOOKRELAY_PACKAGING_DIR}/hookrelay.toml DESTINATION /etc/hookrelay
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hookrelay)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "hookrelay maintainers <maintainers@hookrelay.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "webhook relay: stores every webhook durably, delivers it with retries, replays it")
# The long description; CPack indents its lines for the control file.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "hookrelay sits between the services that send webhooks and the endpoints that handle
them: every webhook is written durably before it is acknowledged, failures are retried with
jitter within caps, a circuit breaker per destination stops hammering an endpoint that is down,
and replay of one event or thousands is one command. Runs as the hardened systemd service
hookrelay.service, configured in /etc/hookrelay/hookrelay.toml.")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# <name>_<version>_<arch>.deb; an architecture from dpkg --print-architecture.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The shared libraries' packages (libsystemd0, libmozjs-102-0, libcurl4, ...) via dpkg-shlibdeps;
# adduser and dpkg-statoverride for postinst, deb-systemd-helper for the unit.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, init-system-helpers (>= 1.54~)")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${HOOKRELAY_PACKAGING_DIR}/debian/conffiles ${HOOKRELAY_PACKAGING_DIR}/debian/postinst
    ${HOOKRELAY_PACKAGING_DIR}/debian/prerm ${HOOKRELAY_PACKAGING_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Absolute destinations (/lib/systemd/system, /etc/hookrelay) land inside the package's tree
# (DESTDIR), never in the build machine's /; the relative ones below /usr.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Read by cpack itself, so HOOKRELAY_DEB_VERSION can change the version without reconfiguring.
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/packaging_cpack.cmake)
include(CPack)
