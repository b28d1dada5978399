# libminnow.so (the C API and the C++ API) and the install tree: headers, libminnow.so and
# libminnow.a, a CMake package (find_package(minnow) -> minnow::minnow) and minnow.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Linked with the whole core archive; the version script keeps only the API visible.
add_library(minnow_shared SHARED cmake/empty.cpp)
target_link_libraries(minnow_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,minnow_core>")
target_include_directories(minnow_shared INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set(MINNOW_ABI_VERSION 4)  # MINNOW_ABI_VERSION in include/minnow/minnow.h
set_target_properties(minnow_shared PROPERTIES OUTPUT_NAME minnow EXPORT_NAME minnow VERSION ${PROJECT_VERSION}
                      SOVERSION ${MINNOW_ABI_VERSION} LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libminnow.map)
target_link_options(minnow_shared PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/libminnow.map"
                    "LINKER:--gc-sections" "LINKER:--as-needed")
add_library(minnow::minnow ALIAS minnow_shared)

install(FILES include/minnow/minnow.h include/minnow/llm.hpp include/minnow/tokenizer.hpp include/minnow/error.hpp include/minnow/embed.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minnow)
install(TARGETS minnow_shared EXPORT minnowTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The static archive for apps that link everything in (needs -lpcre2-8 -lpthread: minnow.pc's Libs.private).
install(FILES $<TARGET_FILE:minnow_core> DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT minnowTargets NAMESPACE minnow:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minnow)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/minnowConfigVersion.cmake COMPATIBILITY SameMinorVersion)
file(WRITE ${CMAKE_BINARY_DIR}/minnowConfig.cmake "include(\"\${CMAKE_CURRENT_LIST_DIR}/minnowTargets.cmake\")\n")
install(FILES ${CMAKE_BINARY_DIR}/minnowConfig.cmake ${CMAKE_BINARY_DIR}/minnowConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minnow)
configure_file(cmake/minnow.pc.in ${CMAKE_BINARY_DIR}/minnow.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/minnow.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
