/-
TapecheckExport: recompute tapecheck's golden vectors with TorchLean's own Spec definitions.

Reads a tapecheck-vectors-v1 file (for example vectors/golden/softmaxLast-edge-cases.json),
evaluates TorchLean's `Spec` definitions at Lean `Float` (IEEE binary64) on the inputs of every
`valid` test of a supported op, and writes a v1 file with those values as `expected` and
provenance `lean:TorchLean@<commit>`. `tapecheck vectors check` accepts the result (README.md).

Meant to run inside a TorchLean checkout (it imports `NN`); see README.md for the command.
It has NOT been compiled by tapecheck's CI, which has no Lean toolchain: the TorchLean names
below are the ones SPEC.md and TorchLean's public sources use, as best we could tell.

TorchLean definitions called (namespace `Spec` unless written out):
* softmaxLast     Spec.Internal.softmaxInnermostSpec, Spec.Internal.softmaxInnermostBackwardSpec
* logSoftmaxLast  Spec.Internal.logSoftmaxInnermostSpec,
                  Spec.Internal.logSoftmaxInnermostBackwardSpec (takes the output y)
* layerNorm       Spec.layerNorm, Spec.layerNormBackward (NormalizationGradients)
* tensors         Runtime.Autograd.TorchLean.ParamIO.tensorOfFlatListExact, floatToJsonBits,
                  jsonBitsToFloat, jsonNat (the ParamIO bit encoding), Spec.toList
Not exported (no matching public Spec definition, or its signature is not known to us):
topKMask, batchNorm, crossEntropy, distill; `invalid` and `acceptable` tests (errors are the
runtime tape's, not the Spec's). Those tests are left out of the output file.

Gradients follow SPEC.md's tape rules: a leaf that does not require grad gets zeros.
-/
import NN

open Lean
open Spec
open Runtime.Autograd.TorchLean.ParamIO

namespace TapecheckExport

/-- A tensor as a v1 file holds it: a shape and values (decoded from binary64 bits). -/
structure Flat where
  shape : List Nat
  values : List Float

def readFlat (j : Json) : Except String Flat := do
  let dims ← (← (← j.getObjVal? "shape").getArr?).toList.mapM Json.getNat?
  let vals ← (← (← j.getObjVal? "values").getArr?).toList.mapM jsonBitsToFloat
  pure ⟨dims, vals⟩

def flatJson (t : Flat) : Json :=
  Json.mkObj [("shape", Json.arr (t.shape.toArray.map jsonNat)),
              ("values", Json.arr (t.values.toArray.map floatToJsonBits))]

def zerosLike (t : Flat) : Flat := ⟨t.shape, t.values.map (fun _ => 0)⟩

def toSpec (t : Flat) : Except String (Tensor Float (Shape.ofList t.shape)) :=
  tensorOfFlatListExact (tag := "tapecheck") (Shape.ofList t.shape) t.values

def ofSpec {s : Shape} (shape : List Nat) (t : Tensor Float s) : Flat := ⟨shape, Spec.toList t⟩

/-- softmaxLast / logSoftmaxLast: the value and, with an upstream, the gradient of x. -/
def rowSoftmax (log : Bool) (x : Flat) (dy : Option Flat) : Except String (Flat × Option Flat) := do
  let xs ← toSpec x
  let y := if log then Internal.logSoftmaxInnermostSpec xs else Internal.softmaxInnermostSpec xs
  match dy with
  | none => pure (ofSpec x.shape y, none)
  | some d =>
    let ds ← tensorOfFlatListExact (tag := "upstream") (Shape.ofList x.shape) d.values
    let dx := if log then Internal.logSoftmaxInnermostBackwardSpec y ds
              else Internal.softmaxInnermostBackwardSpec xs ds
    pure (ofSpec x.shape y, some (ofSpec x.shape dx))

/-- layerNorm: the value and, with an upstream, the gradients of x, gamma and beta. -/
def layerNormCase (seqLen embedDim : Nat) (eps : Float) (x g b : Flat) (dy : Option Flat) :
    Except String (Flat × Option (List Flat)) := do
  if h1 : seqLen > 0 then
    if h2 : embedDim > 0 then
      let xs ← tensorOfFlatListExact (tag := "x") (Shape.ofList [seqLen, embedDim]) x.values
      let gs ← tensorOfFlatListExact (tag := "gamma") (Shape.ofList [embedDim]) g.values
      let bs ← tensorOfFlatListExact (tag := "beta") (Shape.ofList [embedDim]) b.values
      let y := Spec.layerNorm xs gs bs h1 h2 eps
      match dy with
      | none => pure (ofSpec x.shape y, none)
      | some d =>
        let ds ← tensorOfFlatListExact (tag := "upstream") (Shape.ofList [seqLen, embedDim]) d.values
        let r := Spec.layerNormBackward h1 h2 xs gs ds eps
        pure (ofSpec x.shape y, some [ofSpec x.shape r.inputGradient, ofSpec g.shape r.scaleGradient,
                                      ofSpec b.shape r.biasGradient])
    else throw "embedDim must be positive (error cases are not exported)"
  else throw "seqLen must be positive (error cases are not exported)"

/-- One gradient per leaf: the op's gradient for the leaves it names that require grad,
zeros elsewhere (SPEC.md section 2). `flows` pairs a leaf id with its gradient. -/
def gradsPerLeaf (leaves : List Flat) (rg : List Bool) (flows : List (Nat × Flat)) : List Flat :=
  (List.range leaves.length).map fun i =>
    let leaf := leaves.getD i ⟨[], []⟩
    match flows.find? (fun p => p.1 == i), rg.getD i false with
    | some (_, g), true => g
    | _, _ => zerosLike leaf

/-- The expected object of a valid test, or none when the op is not exported. -/
def expectedFor (op : String) (t : Json) : Except String (Option Json) := do
  let leavesJ := (← (← t.getObjVal? "leaves").getArr?).toList
  let leaves ← leavesJ.mapM readFlat
  let rg ← leavesJ.mapM (fun l => do (← l.getObjVal? "requiresGrad").getBool?)
  let call ← t.getObjVal? "call"
  let attrs ← t.getObjVal? "attrs"
  let upstream ← match t.getObjVal? "upstream" with
    | .ok u => some <$> readFlat u
    | .error _ => pure none
  let arg (name : String) : Except String Nat := do (← call.getObjVal? name).getNat?
  let leafAt (i : Nat) : Except String Flat :=
    match leaves.get? i with
    | some l => pure l
    | none => throw s!"call id {i} is past the leaves"
  let (value, flows) ← match op with
    | "softmaxLast" | "logSoftmaxLast" => do
      let xi ← arg "x"
      let (y, dx) ← rowSoftmax (op == "logSoftmaxLast") (← leafAt xi) upstream
      pure (some y, (dx.map fun g => [(xi, g)]).getD [])
    | "layerNorm" => do
      let (xi, gi, bi) := (← arg "x", ← arg "gamma", ← arg "beta")
      let seqLen ← (← attrs.getObjVal? "seqLen").getNat?
      let embedDim ← (← attrs.getObjVal? "embedDim").getNat?
      let eps : Float := match attrs.getObjValAs? Float "epsilon" with
        | .ok e => e
        | .error _ => 1e-5  -- TorchLean.normalizationEpsilon = 1/100000
      let (y, gs) ← layerNormCase seqLen embedDim eps (← leafAt xi) (← leafAt gi) (← leafAt bi) upstream
      pure (some y, match gs with
        | some [dx, dg, db] => [(xi, dx), (gi, dg), (bi, db)]
        | _ => [])
    | _ => pure (none, [])
  match value with
  | none => pure none
  | some y =>
    let fields := [("value", flatJson y)] ++
      (if upstream.isSome then
        [("grads", Json.arr ((gradsPerLeaf leaves rg flows).map flatJson).toArray)]
       else [])
    pure (some (Json.mkObj fields))

/-- The v1 file of the exported tests of `input`, provenance `lean:TorchLean@<commit>`. -/
def exportFile (commit : String) (input : Json) : Except String Json := do
  let op ← (← input.getObjVal? "op").getStr?
  let tests ← (← input.getObjVal? "tests").getArr?
  let mut out : Array Json := #[]
  for t in tests do
    let result ← (← t.getObjVal? "result").getStr?
    if result != "valid" then continue
    match ← expectedFor op t with
    | none => pure ()
    | some e => out := out.push (t.setObjVal! "expected" e)
  let header ← (← input.getObjVal? "header").getArr?
  pure <| Json.mkObj [
    ("schema", Json.str "tapecheck-vectors-v1"),
    ("op", Json.str op),
    ("generator", Json.mkObj [("name", Json.str "TapecheckExport.lean"), ("version", Json.str "1"),
                              ("provenance", Json.str s!"lean:TorchLean@{commit}")]),
    ("header", Json.arr (header.push
      (Json.str s!"Expected values: TorchLean Spec definitions at Float (binary64), TorchLean@{commit}."))),
    ("notes", ← input.getObjVal? "notes"),
    ("numberOfTests", jsonNat out.size),
    ("tests", Json.arr out)]

end TapecheckExport

def main (args : List String) : IO UInt32 := do
  match args with
  | [input, output, commit] =>
    let text ← IO.FS.readFile input
    match Json.parse text >>= TapecheckExport.exportFile commit with
    | .ok j =>
      IO.FS.writeFile output (j.compress ++ "\n")
      return 0
    | .error e =>
      IO.eprintln s!"TapecheckExport: {input}: {e}"
      return 2
  | _ =>
    IO.eprintln "usage: lake env lean --run TapecheckExport.lean IN.json OUT.json COMMIT"
    return 2
