#!/usr/bin/env bash
# No task literal outside the task definitions: every name a task defines
# (its name, advice, default-decision feature, candidate mask) appears as a
# string literal only in evaluators/src/CompilerTask.cpp (or a task's own file
# under evaluators/src/tasks/); everything else receives them from the task.
#
#   tests/layers/task-literals.sh SOURCE_DIR
# With a second argument, a file that must be caught (the test of the test).
set -euo pipefail
root=$1
definitions=("$root/evaluators/src/CompilerTask.cpp")
[ -d "$root/evaluators/src/tasks" ] && definitions+=("$root"/evaluators/src/tasks/*.cpp)
# The literals: `task.<field> = "<value>";` in the definitions.
mapfile -t literals < <(sed -nE \
  's/.*task\.(name|adviceName|defaultDecisionFeature|candidateMask) = "([^"]+)".*/\2/p' \
  "${definitions[@]}" | sort -u)
[ "${#literals[@]}" -ge 6 ] || { echo "task-literals: found only ${#literals[@]} literals in ${definitions[*]}" >&2; exit 2; }
files=()
if [ $# -ge 2 ]; then
  files=("$2")
else
  mapfile -t files < <(find "$root"/{support,corpus,policies,es,rl,evaluators,inprocess,deploy,results,training,apps} \
    -name '*.h' -o -name '*.cpp' | grep -v -e /evaluators/src/CompilerTask.cpp -e /evaluators/src/tasks/)
fi
status=0
for literal in "${literals[@]}"; do
  # A literal in code, not in a comment: the quoted value on a line that is
  # not a // comment.
  if hits=$(grep -nF "\"$literal\"" "${files[@]}" /dev/null | grep -vE '^[^:]+:[0-9]+:\s*//'); then
    echo "task literal \"$literal\" outside the task definitions:" >&2
    echo "$hits" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "task-literals: ${#literals[@]} literals (${literals[*]}), none outside the definitions in ${#files[@]} files"
exit $status
