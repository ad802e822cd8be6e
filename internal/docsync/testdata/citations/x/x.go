package x

// See docs/e.md and docs/a.md.
var help = "the format is in NOTES.md and docs/a.md"

var name = "docs/f.md"
