package llm

import "flag"

// updating reports -update: rewrite the golden files under testdata/.
// Another test file of the package may define the same flag; it is looked
// up first so that both share it. (Package variables initialise file by
// file in name order, so a definition in a file named before this one is
// found.)
var updating = sharedBoolFlag("update", "rewrite the golden files under testdata/")

func sharedBoolFlag(name, usage string) func() bool {
	if f := flag.Lookup(name); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	p := flag.Bool(name, false, usage)
	return func() bool { return *p }
}
