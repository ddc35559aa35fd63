// A task literal where it must not be: tests/layers/task-literals.sh catches it.
const char* feature = "inlining_default";
