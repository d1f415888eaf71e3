import Lake
open Lake DSL

/-!
tapecheck's Lean exporter: golden vectors whose expected values are TorchLean's Spec definitions
evaluated at `Float` (README.md). TorchLean is pinned to one commit; torchlean-api.txt lists
every declaration of it the exporter uses, at that commit, and tapecheck's ctest
vectors_lean_api checks that this lakefile, that list and TapecheckExport.lean name the same
commit.
-/

package tapecheck_export

require TorchLean from git
  "https://github.com/srirampc/TorchLean.git" @ "3447b74f6bf43f83ad50885851caf0bc01b4c53d"

/-- TorchLean's own definitions run compiled: its lakefile notes that the interpreter cannot run
them from precompiled .oleans, so `lean --run` is not an option. The `-lm` matches what
TorchLean's package links its executables with on Linux (its native tensor primitives call
`math.h`). -/
@[default_target]
lean_exe tapecheck_export where
  root := `TapecheckExport
  moreLinkArgs := if System.Platform.isWindows then #[] else #["-lm"]
