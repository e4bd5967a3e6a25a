# Install rules and the Debian package (docs/OPERATIONS.md "Running it as a service").
#
#   cmake --install build --prefix /usr      programs to /usr/bin, the unit to
#                                            /usr/lib/systemd/system, the default
#                                            configuration to /etc/npacd/npacd.toml, the
#                                            manual pages to /usr/share/man/man1
#   cd build && cpack -G DEB                 npacd_<version>_<arch>.deb (make package), from
#                                            the programs and manual pages already built
#
# The manual pages are made at build time from each program's --help and --version by
# help2man (target npac_man, part of ALL). The package's Depends come from the shared
# libraries the programs link (dpkg-shlibdeps); its postinst creates the system user npacd
# and /var/lib/npacd (packaging/debian/postinst).
include(GNUInstallDirs)

set(NPAC_PROGRAMS npacd npacctl npac-soa-sim npac-pdu npac-tunables-doc)
set(NPAC_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(NPAC_MAN_PAGES "")
find_program(NPAC_HELP2MAN help2man REQUIRED)
foreach(program ${NPAC_PROGRAMS})
  set(page ${NPAC_MAN_DIR}/${program}.1.gz)
  add_custom_command(
    OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${NPAC_MAN_DIR}
    COMMAND ${NPAC_HELP2MAN} --no-info --no-discard-stderr --section=1
            --source=npacd --output=${NPAC_MAN_DIR}/${program}.1 $<TARGET_FILE:${program}>
    COMMAND gzip -n -9 -f ${NPAC_MAN_DIR}/${program}.1
    DEPENDS ${program}
    COMMENT "help2man: ${program}.1"
    VERBATIM)
  list(APPEND NPAC_MAN_PAGES ${page})
endforeach()
add_custom_target(npac_man ALL DEPENDS ${NPAC_MAN_PAGES})

install(TARGETS ${NPAC_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${NPAC_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# The unit names /usr/bin/npacd: install with --prefix /usr (the package does).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/npacd.service DESTINATION lib/systemd/system)
# /etc whatever the prefix: the unit reads /etc/npacd/npacd.toml.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/npacd.toml DESTINATION /etc/npacd)

# cpack packages what is built and builds nothing itself (without this, its preinstall
# step builds every target, the tests and benchmarks included): build first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME npacd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NPAC SMS association manager (CMIP over OSI on RFC 1006)")
set(CPACK_PACKAGE_CONTACT "npacd maintainers <npacd@example.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# postinst/prerm: the user, the state directory, systemd reloads; conffiles: dpkg keeps
# an operator's edited /etc/npacd/npacd.toml across upgrades.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
    ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
