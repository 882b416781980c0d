# shoec: the frozen image's C fast paths (shoec.c). Listed by ../micropython.cmake.
add_library(usermod_shoec INTERFACE)
target_sources(usermod_shoec INTERFACE ${CMAKE_CURRENT_LIST_DIR}/shoec.c)
target_include_directories(usermod_shoec INTERFACE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(usermod INTERFACE usermod_shoec)
