# The layers of mlgo-es (docs/ARCHITECTURE.md): which libraries each
# library may use, as mlgo::<folder> names. One table, checked twice: at
# configure time on what every library links (mlgo_check_layer_links), and by
# the layers.includes test on what every source file includes
# (cmake/CheckLayerIncludes.cmake). apps/, tests/ and bench/ may use anything.
set(MLGO_LAYERS support corpus policies es rl evaluators inprocess deploy results training)
set(MLGO_LAYER_ALLOWS_support "")
set(MLGO_LAYER_ALLOWS_corpus support)
set(MLGO_LAYER_ALLOWS_policies support corpus)
# The ES engine knows no compiler, corpus, evaluator or file: rewards come in.
set(MLGO_LAYER_ALLOWS_es support)
# Update maths on recorded decisions, over the policies' MLP.
set(MLGO_LAYER_ALLOWS_rl support corpus policies es)
# Compiles for whoever asks; knows no optimiser.
set(MLGO_LAYER_ALLOWS_evaluators support corpus policies)
set(MLGO_LAYER_ALLOWS_inprocess support corpus policies evaluators)
# The launcher: runs clang with the plugin (built in inprocess/); no LLVM.
set(MLGO_LAYER_ALLOWS_deploy support corpus policies)
# Files and analysis; records arrive as plain data, never from an evaluator.
set(MLGO_LAYER_ALLOWS_results support corpus policies)
# Everything but clang's own code (inprocess).
set(MLGO_LAYER_ALLOWS_training support corpus policies es rl evaluators deploy results)

# The layer `used` names (an mlgo::x or mlgo_x link item, or "x"), or "".
function(mlgo_layer_of item out)
  set(layer "")
  if(item MATCHES "^mlgo(::|_)([a-z]+)$")
    set(layer ${CMAKE_MATCH_2})
  elseif(item IN_LIST MLGO_LAYERS)
    set(layer ${item})
  endif()
  if(NOT layer IN_LIST MLGO_LAYERS)
    set(layer "")
  endif()
  set(${out} ${layer} PARENT_SCOPE)
endfunction()

# Fails the configuration when a layer's library links a library its layer
# must not use (directly; what it may use, it may use transitively).
function(mlgo_check_layer_links)
  set(problems "")
  foreach(layer IN LISTS MLGO_LAYERS)
    if(NOT TARGET mlgo_${layer})
      continue()
    endif()
    get_target_property(links mlgo_${layer} LINK_LIBRARIES)
    get_target_property(interface mlgo_${layer} INTERFACE_LINK_LIBRARIES)
    foreach(item IN LISTS links interface)
      mlgo_layer_of("${item}" used)
      if(used AND NOT used STREQUAL layer AND NOT used IN_LIST MLGO_LAYER_ALLOWS_${layer})
        string(APPEND problems "\n  mlgo::${layer} links mlgo::${used}; its layer may use only: "
               "${MLGO_LAYER_ALLOWS_${layer}}")
      endif()
    endforeach()
  endforeach()
  if(problems)
    message(FATAL_ERROR "layering (cmake/MlgoLayers.cmake, docs/ARCHITECTURE.md):${problems}")
  endif()
endfunction()
