# Shared by bench/pipeline-*.sh: judge NAME SET writes $out/NAME.SET.md and
# .values, the report of $out/NAME.json on a set of configs/inlining-split.toml
# (skipped when its .md exists, so a script resumes where it stopped).
judge() {
  local name=$1 set=$2
  [ -s "$out/$name.$set.md" ] && return 0
  "$eval" report "$out/$name.json" --task pass-pipeline --split configs/inlining-split.toml \
    --set "$set" --markdown "$out/$name.$set.md.part" --values "$out/$name.$set.values" \
    >"$out/$name.$set.log" 2>&1 || true
  mv "$out/$name.$set.md.part" "$out/$name.$set.md"
}
