# Which Pulumi CLI to run: the one on PATH when it fits, else this project's build (tools/build-pulumi.sh).
# Sourced; pulumi_choice is pure (its inputs are arguments) so test/unit/pulumi-choice.test.ts checks it.
#
# pulumi_choice <override> <found path or ""> <its `pulumi version` or ""> <has language host 0|1> <pinned vX.Y.Z>
# prints "use <reason>" or "build <reason>". The range: the pinned version's major, at least the pinned
# version (the engine behaviour this project relies on, e.g. the automatic log in build-pulumi.sh, is that
# version's). <override> is PULUMI_FLEET_USE_SYSTEM_PULUMI: 0 never uses PATH's, 1 uses it whatever its
# version (as before), empty decides by version.
pulumi_choice() {
  local override=$1 found=$2 version=$3 langhost=$4 pinned=$5
  if [[ $override == 0 ]]; then echo "build PULUMI_FLEET_USE_SYSTEM_PULUMI=0"; return; fi
  if [[ -z $found ]]; then echo "build no pulumi on PATH"; return; fi
  if [[ $override == 1 ]]; then echo "use ${version:-?} at $found (PULUMI_FLEET_USE_SYSTEM_PULUMI=1)"; return; fi
  if ((!langhost)); then echo "build $found has no pulumi-language-nodejs beside it"; return; fi
  local re='^v?([0-9]+)\.([0-9]+)\.([0-9]+)'
  if ! [[ $version =~ $re ]]; then echo "build $found reports no version (${version:-nothing})"; return; fi
  local have=("${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
  [[ $pinned =~ $re ]] || { echo "build the pinned version $pinned is not a version"; return; }
  local want=("${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
  if ((have[0] != want[0])) || ((have[1] < want[1] || (have[1] == want[1] && have[2] < want[2]))); then
    echo "build $found is $version, outside >= $pinned < v$((want[0] + 1)).0.0"
    return
  fi
  echo "use $version at $found"
}
