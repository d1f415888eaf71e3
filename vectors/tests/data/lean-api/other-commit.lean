/-
A fixture of check_lean_api: every TorchLean declaration it names is in manifest.txt. Names in
comments and strings are not references: Spec.layerNormJvp /- nested: Spec.batchNorm -/ here.
-/
import NN
import NN.Spec.Layers.Normalization.Core

open Lean (Json)
open Spec (layerNorm)

namespace Fixture

def torchLeanCommit : String := "0000000000000000000000000000000000000000"

structure Pair where
  first : Nat
  second : Json

inductive Choice where
  | left (n : Nat)
  | right

def label (p : Pair) : String := s!"{p.first} not Spec.batchNorm: {(p.second).compress}"

def rank (s : Spec.Shape) (c : Choice) : Nat :=
  match c with
  | .left n => s.length + n
  | Choice.right => (List.range 2).length

def norm (x : TorchLean.Tensor Float [1, 2]) (g b : TorchLean.Tensor Float [2]) :
    TorchLean.Tensor Float [1, 2] :=
  layerNorm x g b (by decide) (by decide) 0.5

end Fixture
