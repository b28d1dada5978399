# The Vulkan backend (src/backends/vulkan): Vulkan headers (libvulkan-dev) to build, glslc to
# compile the shaders to SPIR-V, embedded in the library. The loader is opened at run time,
# so nothing links against it. MINNOW_VULKAN=AUTO builds it where both are found.
set(MINNOW_VULKAN AUTO CACHE STRING "Build the Vulkan backend: ON, OFF or AUTO (where headers and glslc are found)")
set(MINNOW_HAVE_VULKAN OFF)
if(MINNOW_STATIC AND MINNOW_VULKAN STREQUAL "AUTO")
  set(MINNOW_VULKAN OFF)  # a static executable cannot open the system's Vulkan loader
endif()
if(NOT MINNOW_VULKAN STREQUAL "OFF")
  find_path(MINNOW_VULKAN_INCLUDE vulkan/vulkan.h)
  find_program(MINNOW_GLSLC glslc)
  if(MINNOW_VULKAN_INCLUDE AND MINNOW_GLSLC)
    set(MINNOW_HAVE_VULKAN ON)
  elseif(MINNOW_VULKAN STREQUAL "ON")
    message(FATAL_ERROR "MINNOW_VULKAN=ON needs vulkan/vulkan.h (libvulkan-dev) and glslc")
  else()
    message(STATUS "minnow: Vulkan backend off (no vulkan/vulkan.h or glslc)")
  endif()
endif()

file(GLOB MINNOW_VULKAN_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/backends/vulkan/*.cpp)
if(NOT MINNOW_HAVE_VULKAN)
  list(REMOVE_ITEM MINNOW_SOURCES ${MINNOW_VULKAN_SOURCES})
else()
  # Vulkan structures are written {sType} with the rest zeroed, as the API intends.
  set_source_files_properties(${MINNOW_VULKAN_SOURCES} PROPERTIES COMPILE_OPTIONS -Wno-missing-field-initializers)
endif()

# Compiles the kernels and adds them (and the Vulkan headers) to target.
function(minnow_add_vulkan_kernels target)

# Each kernel: a name, its .comp file and the defines it is compiled with.
set(MINNOW_VULKAN_KERNELS
  "rmsnorm rmsnorm.comp SUBGROUPS" "rmsnorm_nosg rmsnorm.comp" "add add.comp" "glu glu.comp" "store_kv store_kv.comp"
  "attention attention.comp SUBGROUPS" "attention_nosg attention.comp" "attention_prefill attention_prefill.comp"
  "attention_prefill_coop_64 attention_prefill_coop.comp HD=64u" "attention_prefill_coop_128 attention_prefill_coop.comp HD=128u"
  "attention_prefill_coop_256 attention_prefill_coop.comp HD=256u")
foreach(type F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K)
  string(TOLOWER ${type} lower)
  list(APPEND MINNOW_VULKAN_KERNELS "matvec_${lower} matvec.comp TYPE_${type} SUBGROUPS"
    "matvec_${lower}_nosg matvec.comp TYPE_${type}" "matvec_glu_${lower} matvec.comp TYPE_${type} SUBGROUPS GLU"
    "matvec_glu_${lower}_nosg matvec.comp TYPE_${type} GLU" "matvec_wide_${lower} matvec.comp TYPE_${type} SUBGROUPS WIDE"
    "matvec_wide_${lower}_nosg matvec.comp TYPE_${type} WIDE" "matvec_glu_wide_${lower} matvec.comp TYPE_${type} SUBGROUPS GLU WIDE"
    "matvec_glu_wide_${lower}_nosg matvec.comp TYPE_${type} GLU WIDE" "matmul_${lower} matmul.comp TYPE_${type}"
    "matmul_narrow_${lower} matmul.comp TYPE_${type} NARROW" "matmul_coop_${lower} matmul_coop.comp TYPE_${type}"
    "matmul_coop_big_${lower} matmul_coop_big.comp TYPE_${type}")
  if(type MATCHES "_K$")  # 16 lanes a super-block (matvec_sb.comp): 64 threads, and 32 with subgroups
    foreach(v "" "glu_" "wide_" "glu_wide_")
      string(REPLACE "_" " " vdefs "${v}")
      string(TOUPPER "${vdefs}" vdefs)
      list(APPEND MINNOW_VULKAN_KERNELS "matvec_sb_${v}${lower} matvec_sb.comp TYPE_${type} SUBGROUPS ${vdefs}"
        "matvec_sb_${v}${lower}_nosg matvec_sb.comp TYPE_${type} ${vdefs}"
        "matvec_sb_${v}${lower}_t32 matvec_sb.comp TYPE_${type} SUBGROUPS THREADS32 ${vdefs}")
    endforeach()
    foreach(v "" "glu_")  # 2 rows in 128 threads
      string(REPLACE "_" " " vdefs "${v}")
      string(TOUPPER "${vdefs}" vdefs)
      list(APPEND MINNOW_VULKAN_KERNELS "matvec_sb_${v}${lower}_t128 matvec_sb.comp TYPE_${type} SUBGROUPS THREADS128 ${vdefs}")
    endforeach()
  endif()
endforeach()
set(shader_dir ${CMAKE_SOURCE_DIR}/src/backends/vulkan/shaders)
set(gen_dir ${CMAKE_BINARY_DIR}/generated/vulkan)
file(MAKE_DIRECTORY ${gen_dir})
file(GLOB shader_headers CONFIGURE_DEPENDS ${shader_dir}/*.glsl)
set(spirv_files "")
set(arrays "")
set(entries "")
foreach(kernel ${MINNOW_VULKAN_KERNELS})
  separate_arguments(parts UNIX_COMMAND "${kernel}")
  list(POP_FRONT parts name source)
  set(defines "")
  foreach(d ${parts})
    list(APPEND defines -D${d})
  endforeach()
  add_custom_command(OUTPUT ${gen_dir}/${name}.inc
    COMMAND ${MINNOW_GLSLC} --target-env=vulkan1.1 -O -mfmt=num ${defines} -o ${gen_dir}/${name}.inc ${shader_dir}/${source}
    DEPENDS ${shader_dir}/${source} ${shader_headers}
    COMMENT "glslc ${name}")
  list(APPEND spirv_files ${gen_dir}/${name}.inc)
  string(APPEND arrays "const uint32_t k_${name}[] = {\n#include \"${name}.inc\"\n};\n")
  string(APPEND entries "    {\"${name}\", k_${name}, sizeof(k_${name})},\n")
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/src/backends/vulkan/shaders.cpp.in ${gen_dir}/shaders.cpp @ONLY)
set_source_files_properties(${gen_dir}/shaders.cpp PROPERTIES OBJECT_DEPENDS "${spirv_files}")
target_sources(${target} PRIVATE ${gen_dir}/shaders.cpp)
target_include_directories(${target} PRIVATE ${gen_dir})
target_include_directories(${target} PUBLIC ${MINNOW_VULKAN_INCLUDE})
target_compile_definitions(${target} PUBLIC MINNOW_HAVE_VULKAN=1)
target_link_libraries(${target} PUBLIC ${CMAKE_DL_LIBS})
endfunction()
