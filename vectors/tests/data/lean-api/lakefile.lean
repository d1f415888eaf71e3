import Lake
open Lake DSL

package fixture

require TorchLean from git
  "https://github.com/srirampc/TorchLean.git" @ "3447b74f6bf43f83ad50885851caf0bc01b4c53d"
