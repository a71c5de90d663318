# Sourced by the GPU scripts: `step NAME COMMAND...` runs COMMAND with its output in $STEP_LOGS/NAME.log,
# prints the log's last $STEP_TAIL lines (25), adds "NAME ok|FAIL:rc seconds" to the array `summary`
# and sets failed=1 when the command fails; it returns the command's status.
summary=()
failed=0
step() {
  local name=$1; shift
  local start=$SECONDS
  "$@" >"$STEP_LOGS/$name.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || failed=1
  summary+=("$(printf '%-34s %-6s %4ss' "$name" "$([ $rc -eq 0 ] && echo ok || echo FAIL:$rc)" $((SECONDS - start)))")
  tail -n "${STEP_TAIL:-25}" "$STEP_LOGS/$name.log"
  return $rc
}
