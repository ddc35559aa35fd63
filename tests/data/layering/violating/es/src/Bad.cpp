// Test data for layers.includes.catches-violations: the ES engine including
// an evaluator header, which its layer must not. Never compiled.
#include "mlgo/es/GradientEs.h"
#include "mlgo/evaluators/Evaluator.h"
