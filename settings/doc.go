// Package settings reads the declarations of a configuration's settings
// from struct tags, so that each setting is declared once — where its value
// lives — and everything else derives from that declaration: the flag and
// its help text, the configuration-file key, the default, each recipe's
// value, the range check and the printed or saved configuration.
//
// A setting is a struct field with a `setting` tag:
//
//	Tilt float64 `setting:"explore-tilt" default:"0" recipe:"tilted=10" min:"0" max:"1000"
//		group:"explorer" stages:"learner" help:"λ > 0: act with π_θ·exp(λ·r̂) instead of training π_B"`
//
// The tags:
//
//   - setting: the key, which is the flag's name and the configuration
//     file's key. `setting:",inline"` on a struct field (or an embedded
//     struct) lists that struct's settings as the outer struct's own.
//   - default: the value a fresh configuration starts from, as text in the
//     flag's syntax ("" for none). derived: instead of a default, what a
//     zero value is filled in from ("N/2, at least 2"); a derived count may
//     be 0 and nothing below.
//   - help: one line for --help. group: the heading the flag is listed
//     under. stages: the stages that read it (comma-separated).
//   - recipe: the values named recipes set in place of the default, as
//     "name=value" pairs separated by ";".
//   - alias: older keys that still read (comma-separated).
//   - min, max: an inclusive range; above: an exclusive lower bound;
//     count: "true" for an integer of at least 1; enum: the allowed values
//     separated by "|".
//
// The package knows nothing of flags or files; Table, Defaults, Validate,
// Set and Text are what the command line, the configuration-file decoders
// and the saved configuration build on.
package settings
