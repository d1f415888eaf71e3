import Lake
open Lake DSL

package fixture

require TorchLean from git
  "https://github.com/srirampc/TorchLean.git" @ "1111111111111111111111111111111111111111"
