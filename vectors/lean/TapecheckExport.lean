/-
TapecheckExport: tapecheck's golden vectors with expected values from TorchLean's own Spec
definitions, evaluated at Lean `Float` (IEEE binary64).

`lake exe tapecheck_export OUT_DIR IN.json...` reads tapecheck-vectors-v1 files (for example
vectors/golden/*.json), evaluates TorchLean's Spec definitions on the inputs of every `valid`
test of an op they define, and writes one v1 file per input to OUT_DIR/<the input's name>, with
those values as `expected` and provenance `lean:TorchLean@<commit>`. Tests of other results, and
valid tests no Spec definition covers, are left out (README.md lists them per op); the output is
compact JSON with object keys in sorted order, as `Lean.Json.compress` writes it.

Every TorchLean declaration used here is written with its full name; torchlean-api.txt lists
each with its signature and file at the pinned commit, and tapecheck's test vectors_lean_api
fails when this file names one that is not listed.
-/
import NN
import NN.Spec.Layers.Activation
import NN.Spec.Layers.Normalization.BatchNorm
import NN.Spec.Layers.Loss
import NN.Runtime.Autograd.Model.StateIO

open Lean (Json)

namespace TapecheckExport

/-- The TorchLean commit this program is built against; lakefile.lean requires the same one. -/
def torchLeanCommit : String := "3447b74f6bf43f83ad50885851caf0bc01b4c53d"

def exporterVersion : String := "1"

/-- The start of the header line added to every file written. Input lines that start with it
are dropped, so that exporting an exported file gives the same bytes. -/
def headerMarker : String := "Expected values: TorchLean Spec definitions at Float (binary64), "

def headerLine : String := s!"{headerMarker}TorchLean@{torchLeanCommit}."

/-- TorchLean's tensor of Lean `Float`s of shape `s`. -/
abbrev FloatTensor (s : Spec.Shape) : Type := TorchLean.Tensor Float s

/-- A tensor of a test, `{"shape": [...], "values": [binary64 bits]}`, read with TorchLean's
exact state encoding: the shape must be `s` and every word a binary64 pattern Lean accepts. -/
def readTensor (tag : String) (s : Spec.Shape) (j : Json) : Except String (FloatTensor s) :=
  Runtime.Autograd.Model.StateIO.tensorFromJsonBits (α := Float) tag s j

/-- A tensor in the same encoding, which is the tensor layout of tapecheck-vectors-v1. -/
def writeTensor {s : Spec.Shape} (t : FloatTensor s) : Json :=
  Runtime.Autograd.Model.StateIO.tensorToJsonBits s t

/-- The dimensions of a JSON shape. -/
def readDims (j : Json) : Except String (List Nat) := do
  let dims ← j.getArr?
  dims.toList.mapM (fun d => d.getNat?)

/-- The zero tensor of a shape, in the layout `writeTensor` gives (+0 is the word 0). -/
def zerosJson (dims : List Nat) : Json :=
  let size := dims.foldl (fun a b => a * b) 1
  Json.mkObj [("shape", Json.arr (dims.map (fun d => Lean.toJson d)).toArray),
    ("values", Json.arr (List.replicate size (Lean.toJson (0 : Nat))).toArray)]

/-- A leaf of a test: its JSON (a tensor with `requiresGrad`), its shape and its flag. -/
structure Leaf where
  json : Json
  dims : List Nat
  requiresGrad : Bool

def readLeaf (j : Json) : Except String Leaf := do
  let dims ← readDims (← j.getObjVal? "shape")
  let requiresGrad ← (← j.getObjVal? "requiresGrad").getBool?
  pure { json := j, dims := dims, requiresGrad := requiresGrad }

/-- One test of a v1 file, as far as the exporter reads it. -/
structure Test where
  json : Json
  tcId : Nat
  leaves : Array Leaf
  call : Json
  attrs : Json
  upstream : Option Json

def readTest (j : Json) : Except String Test := do
  let tcId ← (← j.getObjVal? "tcId").getNat?
  let leaves ← (← (← j.getObjVal? "leaves").getArr?).mapM readLeaf
  let call ← j.getObjVal? "call"
  let attrs ← j.getObjVal? "attrs"
  pure { json := j, tcId := tcId, leaves := leaves, call := call, attrs := attrs,
         upstream := (j.getObjVal? "upstream").toOption }

/-- The leaf id that `call` gives a tensor argument. -/
def Test.arg (t : Test) (name : String) : Except String Nat := do
  (← t.call.getObjVal? name).getNat?

def Test.leaf (t : Test) (id : Nat) : Except String Leaf :=
  match t.leaves[id]? with
  | some l => pure l
  | none => throw s!"call id {id} is past the {t.leaves.size} leaves"

def Test.natAttr (t : Test) (name : String) : Except String Nat := do
  (← t.attrs.getObjVal? name).getNat?

/-- The `epsilon` attribute; none when absent, and the Spec's own default applies. -/
def Test.epsilon (t : Test) : Except String (Option Float) :=
  match t.attrs.getObjVal? "epsilon" with
  | .error _ => pure none
  | .ok j => do
    let e : Float ← Lean.fromJson? j
    pure (some e)

/-- What the exporter does with one valid test. -/
inductive Verdict where
  | exported (expected : Json)
  | skipped (reason : String)

/-- The gradient `expected.grads` holds for a leaf: the op's (`flows`, by leaf id) when the leaf
requires grad, zeros otherwise (docs/spec.md#tape). -/
def gradOfLeaf (flows : List (Nat × Json)) (id : Nat) (leaf : Leaf) : Json :=
  if leaf.requiresGrad then
    match flows.find? (fun f => f.1 == id) with
    | some f => f.2
    | none => zerosJson leaf.dims
  else zerosJson leaf.dims

def gradsJson (t : Test) (flows : List (Nat × Json)) : Json :=
  let pairs := (List.range t.leaves.size).zip t.leaves.toList
  Json.arr (pairs.map (fun p => gradOfLeaf flows p.1 p.2)).toArray

def requiresGradAt (t : Test) (id : Nat) : Bool :=
  match t.leaves[id]? with
  | some l => l.requiresGrad
  | none => false

/-- A leaf passed as two tensor arguments that requires grad receives two gradients; their sum
is the tape's work, not one Spec definition's. -/
def sharedLeaf? (t : Test) (flows : List (Nat × Json)) : Option Nat :=
  let ids := flows.map (fun f => f.1)
  ids.find? (fun i => decide ((ids.filter (fun j => j == i)).length > 1) && requiresGradAt t i)

/-- `expected` from the op's value and, when the test has an upstream, its gradients. -/
def expectedObject (t : Test) (value : Json) (flows : List (Nat × Json)) : Verdict :=
  match t.upstream, sharedLeaf? t flows with
  | none, _ => Verdict.exported (Json.mkObj [("value", value)])
  | some _, some i => Verdict.skipped s!"leaf {i} is two arguments and requires grad"
  | some _, none => Verdict.exported (Json.mkObj [("grads", gradsJson t flows), ("value", value)])

/-- softmaxLast, logSoftmaxLast: the innermost-axis softmax specs and, with an upstream, their
backward specs (log-softmax's takes the output, softmax's the input). -/
def rowOp (t : Test) (log : Bool) : Except String Verdict := do
  let s ← readDims (← t.attrs.getObjVal? "s")
  let xi ← t.arg "x"
  let x ← readTensor "x" s (← t.leaf xi).json
  let y : FloatTensor s :=
    if log then Activation.Internal.logSoftmaxInnermostSpec x
    else Activation.Internal.softmaxInnermostSpec x
  match t.upstream with
  | none => pure (expectedObject t (writeTensor y) [])
  | some u =>
    let dy ← readTensor "upstream" s u
    let dx : FloatTensor s :=
      if log then Activation.Internal.logSoftmaxInnermostBackwardSpec y dy
      else Activation.Internal.softmaxInnermostBackwardSpec x dy
    pure (expectedObject t (writeTensor y) [(xi, writeTensor dx)])

/-- layerNorm: `Spec.layerNorm` and, with an upstream, `Spec.layerNormBackward`. -/
def layerNormOp (t : Test) : Except String Verdict := do
  let seqLen ← t.natAttr "seqLen"
  let embedDim ← t.natAttr "embedDim"
  let eps ← t.epsilon
  let (xi, gi, bi) := (← t.arg "x", ← t.arg "gamma", ← t.arg "beta")
  if h1 : seqLen > 0 then
    if h2 : embedDim > 0 then
      let x ← readTensor "x" [seqLen, embedDim] (← t.leaf xi).json
      let g ← readTensor "gamma" [embedDim] (← t.leaf gi).json
      let b ← readTensor "beta" [embedDim] (← t.leaf bi).json
      let y : FloatTensor [seqLen, embedDim] :=
        match eps with
        | some e => Spec.layerNorm x g b h1 h2 e
        | none => Spec.layerNorm x g b h1 h2
      match t.upstream with
      | none => pure (expectedObject t (writeTensor y) [])
      | some u =>
        let dy ← readTensor "upstream" [seqLen, embedDim] u
        let r : Spec.NormalizationGradients Float [seqLen, embedDim] [embedDim] :=
          match eps with
          | some e => Spec.layerNormBackward h1 h2 x g dy e
          | none => Spec.layerNormBackward h1 h2 x g dy
        pure (expectedObject t (writeTensor y)
          [(xi, writeTensor r.inputGradient), (gi, writeTensor r.scaleGradient),
           (bi, writeTensor r.biasGradient)])
    else throw "a valid layerNorm test has embedDim > 0"
  else throw "a valid layerNorm test has seqLen > 0"

/-- batchNorm's forward; its `Shape.WellFormed` argument comes from the shape's positive size. -/
def batchNormValue (channels : Nat) (spatial : Spec.Shape) (eps : Option Float)
    (h : 0 < Spec.Shape.size (Spec.Shape.concat [channels] spatial))
    (x : FloatTensor (Spec.Shape.concat [channels] spatial)) (g b : FloatTensor [channels]) :
    FloatTensor (Spec.Shape.concat [channels] spatial) :=
  letI : Spec.Shape.WellFormed (Spec.Shape.concat [channels] spatial) :=
    ⟨Spec.Shape.wellFormed_of_size_pos h⟩
  match eps with
  | some e => Spec.batchNorm (channels := channels) (sSpatial := spatial) x g b e
  | none => Spec.batchNorm (channels := channels) (sSpatial := spatial) x g b

def batchNormGrads (channels : Nat) (spatial : Spec.Shape) (eps : Option Float)
    (h : 0 < Spec.Shape.size (Spec.Shape.concat [channels] spatial))
    (x dy : FloatTensor (Spec.Shape.concat [channels] spatial)) (g : FloatTensor [channels]) :
    Spec.NormalizationGradients Float (Spec.Shape.concat [channels] spatial) [channels] :=
  letI : Spec.Shape.WellFormed (Spec.Shape.concat [channels] spatial) :=
    ⟨Spec.Shape.wellFormed_of_size_pos h⟩
  match eps with
  | some e => Spec.batchNormBackward (channels := channels) (sSpatial := spatial) x g dy e
  | none => Spec.batchNormBackward (channels := channels) (sSpatial := spatial) x g dy

/-- batchNorm: `Spec.batchNorm` and, with an upstream, `Spec.batchNormBackward`. -/
def batchNormOp (t : Test) : Except String Verdict := do
  let channels ← t.natAttr "channels"
  let spatial ← readDims (← t.attrs.getObjVal? "spatial")
  let eps ← t.epsilon
  let (xi, gi, bi) := (← t.arg "x", ← t.arg "gamma", ← t.arg "beta")
  if h : 0 < Spec.Shape.size (Spec.Shape.concat [channels] spatial) then
    let x ← readTensor "x" (Spec.Shape.concat [channels] spatial) (← t.leaf xi).json
    let g ← readTensor "gamma" [channels] (← t.leaf gi).json
    let b ← readTensor "beta" [channels] (← t.leaf bi).json
    let y := batchNormValue channels spatial eps h x g b
    match t.upstream with
    | none => pure (expectedObject t (writeTensor y) [])
    | some u =>
      let dy ← readTensor "upstream" (Spec.Shape.concat [channels] spatial) u
      let r := batchNormGrads channels spatial eps h x dy g
      pure (expectedObject t (writeTensor y)
        [(xi, writeTensor r.inputGradient), (gi, writeTensor r.scaleGradient),
         (bi, writeTensor r.biasGradient)])
  else throw "a valid batchNorm test has channels > 0 and every spatial dimension > 0"

/-- crossEntropy's loss; its `Shape.AxisInBounds` argument comes from `axis < rank s`. -/
def crossEntropyLoss (s : Spec.Shape) (axis : Nat) (h : axis < Spec.Shape.rank s)
    (logits target : FloatTensor s) : Float :=
  letI : Spec.Shape.AxisInBounds axis s := Spec.Shape.AxisInBounds.ofRank h
  Spec.crossEntropyLogitsSpec axis logits target

def crossEntropyLogitsGrad (s : Spec.Shape) (axis : Nat) (h : axis < Spec.Shape.rank s)
    (logits target : FloatTensor s) : FloatTensor s :=
  letI : Spec.Shape.AxisInBounds axis s := Spec.Shape.AxisInBounds.ofRank h
  Spec.crossEntropyLogitsDerivSpec axis logits target

/-- crossEntropy with `mean` (its default): `Spec.crossEntropyLogitsSpec` and, with an upstream,
the logits' gradient `Spec.crossEntropyLogitsDerivSpec` scaled by it. There is no Spec for
`mean = false` or for the target's gradient, so those tests are left out. -/
def crossEntropyOp (t : Test) : Except String Verdict := do
  let mean ← match t.attrs.getObjVal? "mean" with
    | .error _ => pure true
    | .ok j => j.getBool?
  if !mean then
    return Verdict.skipped "mean = false has no Spec definition"
  let s ← readDims (← t.attrs.getObjVal? "s")
  let axis ← t.natAttr "axis"
  let (li, ti) := (← t.arg "logits", ← t.arg "target")
  if (← t.leaf ti).requiresGrad && t.upstream.isSome then
    return Verdict.skipped "the target requires grad, and its gradient has no Spec definition"
  if h : axis < Spec.Shape.rank s then
    let logits ← readTensor "logits" s (← t.leaf li).json
    let target ← readTensor "target" s (← t.leaf ti).json
    let value := writeTensor (TorchLean.Tensor.scalar (crossEntropyLoss s axis h logits target))
    match t.upstream with
    | none => pure (expectedObject t value [])
    | some u =>
      let dy ← readTensor "upstream" [] u
      let g := TorchLean.Tensor.scaleSpec (crossEntropyLogitsGrad s axis h logits target)
        (TorchLean.Tensor.item dy)
      pure (expectedObject t value [(li, writeTensor g)])
  else throw "a valid crossEntropy test has axis < rank s"

/-- The verdict on one valid test of `op`. -/
def verdictFor (op : String) (t : Test) : Except String Verdict :=
  match op with
  | "softmaxLast" => rowOp t false
  | "logSoftmaxLast" => rowOp t true
  | "layerNorm" => layerNormOp t
  | "batchNorm" => batchNormOp t
  | "crossEntropy" => crossEntropyOp t
  | "topKMask" => pure (Verdict.skipped "topKMask has no public Spec definition")
  | "distill" => pure (Verdict.skipped "distill has no public Spec definition")
  | other => throw s!"'{other}' is not an op of tapecheck-vectors-v1"

/-- An exported file, how many tests it holds, and a line per valid test left out. -/
structure Exported where
  file : Json
  count : Nat
  left : Array String

def exportFile (input : Json) : Except String Exported := do
  let op ← (← input.getObjVal? "op").getStr?
  let tests ← (← input.getObjVal? "tests").getArr?
  let mut exported : Array Json := #[]
  let mut left : Array String := #[]
  for tj in tests do
    if (← (← tj.getObjVal? "result").getStr?) != "valid" then continue
    let t ← readTest tj
    match verdictFor op t with
    | .error e => throw s!"tcId {t.tcId}: {e}"
    | .ok (Verdict.exported e) => exported := exported.push (tj.setObjVal! "expected" e)
    | .ok (Verdict.skipped why) => left := left.push s!"tcId {t.tcId}: {why}"
  let header := (← (← input.getObjVal? "header").getArr?).filter (fun h =>
    match h.getStr? with
    | .ok line => !line.startsWith headerMarker
    | .error _ => true)
  let file := Json.mkObj [
    ("schema", Json.str "tapecheck-vectors-v1"),
    ("op", Json.str op),
    ("generator", Json.mkObj [("name", Json.str "TapecheckExport"),
      ("version", Json.str exporterVersion),
      ("provenance", Json.str s!"lean:TorchLean@{torchLeanCommit}")]),
    ("header", Json.arr (header.push (Json.str headerLine))),
    ("notes", ← input.getObjVal? "notes"),
    ("numberOfTests", Lean.toJson exported.size),
    ("tests", Json.arr exported)]
  pure { file := file, count := exported.size, left := left }

def readInput (path : String) : IO (Except String String) := do
  try
    return Except.ok (← IO.FS.readFile (System.FilePath.mk path))
  catch e =>
    return Except.error (toString e)

/-- Exports every input, or writes nothing: every file is read and exported before the first
one is written. -/
def run (outDir : System.FilePath) (inputs : List String) : IO UInt32 := do
  let mut outputs : Array (System.FilePath × String) := #[]
  for path in inputs do
    let exported := (← readInput path) >>= Json.parse >>= exportFile
    match exported with
    | .error e =>
      IO.eprintln s!"TapecheckExport: {path}: {e}"
      return 2
    | .ok x =>
      let name := ((System.FilePath.mk path).fileName).getD path
      outputs := outputs.push (outDir / name, x.file.compress ++ "\n")
      IO.println s!"{path}: {x.count} tests exported"
      for line in x.left do
        IO.println s!"  left out {line}"
  IO.FS.createDirAll outDir
  for (file, text) in outputs do
    IO.FS.writeFile file text
  return 0

def usage : String :=
  "usage: lake exe tapecheck_export OUT_DIR IN.json...\n" ++
  "  IN: tapecheck-vectors-v1 files; writes OUT_DIR/<name of each IN> (exit 0), or nothing (exit 2)"

end TapecheckExport

def main (args : List String) : IO UInt32 :=
  match args with
  | outDir :: inputs@(_ :: _) => TapecheckExport.run (System.FilePath.mk outDir) inputs
  | _ => do
    IO.eprintln TapecheckExport.usage
    return 2
